package dev.kvrouter.schemas.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.avro.Schema;

/**
 * A client for the Confluent Schema Registry REST API (v7), which Confluent Schema Registry,
 * Karapace, Redpanda and Apicurio ({@code /apis/ccompat/v7}) all serve. Ids and schemas are cached
 * (bounded, least recently used out first), so steady-state serialization makes no HTTP call.
 * Thread-safe.
 */
public final class SchemaRegistryClient {

    private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final RegistrySettings settings;
    private final HttpClient http;
    private final Optional<String> authorization;
    private final LruCache<Integer, Schema> schemaById;
    private final LruCache<SubjectSchema, Integer> idBySubjectSchema;

    private record SubjectSchema(String subject, Schema schema) {}

    public SchemaRegistryClient(RegistrySettings settings) {
        this.settings = settings;
        this.http = HttpClient.newBuilder().connectTimeout(settings.connectTimeout()).sslContext(settings.sslContext()).build();
        this.authorization = settings.basicAuthUserInfo().map(userInfo ->
                "Basic " + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8)));
        this.schemaById = new LruCache<>(settings.cacheCapacity());
        this.idBySubjectSchema = new LruCache<>(settings.cacheCapacity());
    }

    public RegistrySettings settings() {
        return settings;
    }

    /**
     * Registers the schema under the subject (a no-op returning the existing id when it is already
     * there) and returns its id.
     *
     * @throws SchemaRegistryException.Incompatible when the subject's compatibility rule rejects it
     */
    public int register(String subject, Schema schema) {
        return idBySubjectSchema.computeIfAbsent(new SubjectSchema(subject, schema), key -> {
            JsonNode answer = call("POST", "/subjects/" + encode(subject) + "/versions", schemaBody(schema),
                    "register a schema under subject '" + subject + "'");
            int id = answer.path("id").asInt(-1);
            if (id < 0) {
                throw new SchemaRegistryException("registry answered a registration without an id: " + answer, 200, -1, null);
            }
            schemaById.put(id, schema);
            return id;
        });
    }

    /** The id of this exact schema under the subject, if it is registered there. */
    public OptionalInt lookup(String subject, Schema schema) {
        SubjectSchema key = new SubjectSchema(subject, schema);
        Integer cached = idBySubjectSchema.get(key);
        if (cached != null) {
            return OptionalInt.of(cached);
        }
        try {
            JsonNode answer = call("POST", "/subjects/" + encode(subject), schemaBody(schema),
                    "look up a schema under subject '" + subject + "'");
            int id = answer.path("id").asInt();
            idBySubjectSchema.put(key, id);
            schemaById.put(id, schema);
            return OptionalInt.of(id);
        } catch (SchemaRegistryException.NotFound e) {
            return OptionalInt.empty();
        }
    }

    /**
     * The schema with this id.
     *
     * @throws SchemaRegistryException.UnknownSchemaId when the registry has no such id
     */
    public Schema schemaById(int id) {
        return schemaById.computeIfAbsent(id, key -> {
            JsonNode answer;
            try {
                answer = call("GET", "/schemas/ids/" + id, null, "fetch schema id " + id);
            } catch (SchemaRegistryException.NotFound e) {
                throw new SchemaRegistryException.UnknownSchemaId(id, settings.urls().toString());
            }
            String type = answer.path("schemaType").asText("AVRO");
            if (!"AVRO".equals(type)) {
                throw new SchemaRegistryException("schema id " + id + " is a " + type + " schema, not Avro", 200, -1, null);
            }
            return new Schema.Parser().parse(answer.path("schema").asText());
        });
    }

    /** Whether the subject's rule would accept the schema as its next version (true for a new subject). */
    public boolean isCompatible(String subject, Schema schema) {
        try {
            JsonNode answer = call("POST", "/compatibility/subjects/" + encode(subject) + "/versions/latest",
                    schemaBody(schema), "check compatibility under subject '" + subject + "'");
            return answer.path("is_compatible").asBoolean(false);
        } catch (SchemaRegistryException.NotFound e) {
            return true;
        }
    }

    public List<String> subjects() {
        List<String> subjects = new ArrayList<>();
        call("GET", "/subjects", null, "list subjects").forEach(n -> subjects.add(n.asText()));
        return subjects;
    }

    private static String schemaBody(Schema schema) {
        ObjectNode body = JSON.createObjectNode();
        body.put("schema", schema.toString());
        return body.toString();
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * One REST call, trying each configured URL in turn while none answers. An answer, even an
     * error, ends the search: another registry of the same cluster would say the same.
     */
    private JsonNode call(String method, String path, String body, String what) {
        List<String> failures = new ArrayList<>();
        IOException lastFailure = null;
        for (URI base : settings.urls()) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                    .timeout(settings.requestTimeout())
                    .header("Accept", CONTENT_TYPE + ", application/json");
            authorization.ifPresent(a -> request.header("Authorization", a));
            if (body != null) {
                request.header("Content-Type", CONTENT_TYPE).method(method, HttpRequest.BodyPublishers.ofString(body));
            } else {
                request.method(method, HttpRequest.BodyPublishers.noBody());
            }
            HttpResponse<String> response;
            try {
                response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                lastFailure = e;
                failures.add(base + ": " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage()));
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SchemaRegistryException("interrupted while trying to " + what, -1, -1, e);
            }
            return answer(response, base, what);
        }
        throw new SchemaRegistryException.Unreachable("schema registry unreachable, could not " + what + ": "
                + String.join("; ", failures), lastFailure);
    }

    private static JsonNode answer(HttpResponse<String> response, URI base, String what) {
        int status = response.statusCode();
        JsonNode json;
        try {
            json = response.body() == null || response.body().isBlank() ? JSON.nullNode() : JSON.readTree(response.body());
        } catch (IOException e) {
            if (status / 100 == 2) {
                throw new SchemaRegistryException("registry at " + base + " answered " + status
                        + " with a body that is not JSON (is this a schema registry URL?)", status, -1, e);
            }
            json = JSON.nullNode();
        }
        if (status / 100 == 2) {
            return json;
        }
        int errorCode = json.path("error_code").asInt(-1);
        String message = json.path("message").asText(response.body() == null ? "" : response.body());
        String text = "registry at " + base + " refused to " + what + ": HTTP " + status
                + (errorCode > 0 ? " error " + errorCode : "") + ": " + message;
        if (status == 404) {
            throw new SchemaRegistryException.NotFound(text, errorCode);
        }
        if (status == 409) {
            throw new SchemaRegistryException.Incompatible(text, errorCode);
        }
        if (status == 401 || status == 403) {
            throw new SchemaRegistryException("the schema registry at " + base + " refused to " + what + ": HTTP " + status
                    + (status == 401 ? " (no or wrong credentials)" : " (the user may not do this)") + ": set "
                    + RegistrySettings.BASIC_AUTH_USER_INFO + " (user:password, e.g. user:${env:REGISTRY_PASSWORD}) in the"
                    + " client config (--client-config FILE or $KVR_CLIENT_CONFIG)", status, errorCode, null);
        }
        throw new SchemaRegistryException(text, status, errorCode, null);
    }
}
