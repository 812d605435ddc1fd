package dev.kvrouter.httpfleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * One OpenAI-compatible generation request as the engine reads it: {@code /v1/completions} with
 * {@code prompt} as token ids or text, or {@code /v1/chat/completions} with {@code messages}. The
 * simulated engine has no tokenizer: text (a prompt, or the messages as {@code role: content} lines)
 * becomes one token per UTF-8 byte, which keeps equal text prefixes equal token prefixes.
 *
 * @param chat          a chat completion (its answer and chunks are shaped as such)
 * @param promptTokens  the prompt's token ids
 * @param maxTokens     tokens to generate ({@code max_tokens}, or {@code max_completion_tokens} in chat; default 16, as vLLM's)
 * @param includeUsage  a streamed answer ends with a usage chunk ({@code stream_options.include_usage})
 */
record OpenAiRequest(boolean chat, String model, int[] promptTokens, int maxTokens, boolean stream, boolean includeUsage) {

    static final int DEFAULT_MAX_TOKENS = 16;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The request was not one the engine serves; {@code status} is the HTTP answer (400 or 404). */
    static final class Refused extends Exception {
        final int status;

        Refused(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    static OpenAiRequest parse(boolean chat, byte[] body, String servedModel) throws Refused {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException e) {
            throw new Refused(400, "the body is not JSON: " + e.getMessage().lines().findFirst().orElse(""));
        }
        if (root == null || !root.isObject()) {
            throw new Refused(400, "the body is not a JSON object");
        }
        String model = root.path("model").asText(servedModel);
        if (!model.equals(servedModel)) {
            throw new Refused(404, "The model `" + model + "` does not exist.");
        }
        int[] tokens = chat ? messages(root.get("messages")) : prompt(root.get("prompt"));
        JsonNode max = chat && root.has("max_completion_tokens") ? root.get("max_completion_tokens") : root.get("max_tokens");
        int maxTokens = DEFAULT_MAX_TOKENS;
        if (max != null && !max.isNull()) {
            if (!max.canConvertToInt() || max.asInt() < 1) {
                throw new Refused(400, "max_tokens must be a positive integer, got " + max);
            }
            maxTokens = max.asInt();
        }
        boolean stream = root.path("stream").asBoolean(false);
        boolean includeUsage = root.path("stream_options").path("include_usage").asBoolean(false);
        return new OpenAiRequest(chat, model, tokens, maxTokens, stream, includeUsage);
    }

    private static int[] prompt(JsonNode prompt) throws Refused {
        if (prompt == null || prompt.isNull()) {
            throw new Refused(400, "prompt is missing");
        }
        if (prompt.isTextual()) {
            return bytes(prompt.asText());
        }
        if (prompt.isArray() && !prompt.isEmpty() && prompt.get(0).isIntegralNumber()) {
            int[] tokens = new int[prompt.size()];
            for (int i = 0; i < tokens.length; i++) {
                JsonNode t = prompt.get(i);
                if (!t.canConvertToInt() || t.asInt() < 0) {
                    throw new Refused(400, "prompt token " + i + " is not a token id: " + t);
                }
                tokens[i] = t.asInt();
            }
            return tokens;
        }
        throw new Refused(400, "prompt must be a string or one list of token ids (batched prompts are not served here)");
    }

    private static int[] messages(JsonNode messages) throws Refused {
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw new Refused(400, "messages must be a non-empty list");
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode m : messages) {
            JsonNode content = m.get("content");
            String body;
            if (content != null && content.isTextual()) {
                body = content.asText();
            } else if (content != null && content.isArray()) {
                StringBuilder parts = new StringBuilder();
                for (JsonNode part : content) {
                    parts.append(part.path("text").asText(""));
                }
                body = parts.toString();
            } else {
                throw new Refused(400, "a message's content must be a string or a list of parts");
            }
            text.append(m.path("role").asText("user")).append(": ").append(body).append('\n');
        }
        return bytes(text.toString());
    }

    private static int[] bytes(String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        int[] tokens = new int[b.length];
        for (int i = 0; i < b.length; i++) {
            tokens[i] = b[i] & 0xff;
        }
        return tokens;
    }
}
