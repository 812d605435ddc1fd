package dev.kvrouter.schemas.registry;

/**
 * A schema registry call failed. Subclasses tell the cases a caller acts on differently;
 * {@link #httpStatus()} and {@link #errorCode()} carry the registry's own answer when there was one.
 */
public class SchemaRegistryException extends RuntimeException {

    private final int httpStatus;
    private final int errorCode;

    public SchemaRegistryException(String message, int httpStatus, int errorCode, Throwable cause) {
        super(message, cause);
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
    }

    /** HTTP status of the registry's answer; -1 when there was no answer. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The registry's {@code error_code} (e.g. 40403 schema not found); -1 when none was given. */
    public int errorCode() {
        return errorCode;
    }

    /** No registry URL answered (connection refused, timed out, DNS). Retrying later may help. */
    public static final class Unreachable extends SchemaRegistryException {
        public Unreachable(String message, Throwable cause) {
            super(message, -1, -1, cause);
        }
    }

    /** The subject, version or schema does not exist in the registry. */
    public static class NotFound extends SchemaRegistryException {
        public NotFound(String message, int errorCode) {
            super(message, 404, errorCode, null);
        }
    }

    /** No schema has this id: the bytes were written against another registry, or the schema was deleted. */
    public static final class UnknownSchemaId extends NotFound {
        private final int schemaId;

        public UnknownSchemaId(int schemaId, String registry) {
            super("schema id " + schemaId + " is unknown to the registry at " + registry
                    + " (written against another registry, or the schema was deleted)", 40403);
            this.schemaId = schemaId;
        }

        public int schemaId() {
            return schemaId;
        }
    }

    /** The schema breaks the subject's compatibility rule (BACKWARD by default). */
    public static final class Incompatible extends SchemaRegistryException {
        public Incompatible(String message, int errorCode) {
            super(message, 409, errorCode, null);
        }
    }
}
