package dev.kvrouter.bridge;

/** A frame the bridge cannot turn into a batch; the message is the reason filed with its dead letter. */
public final class UndecodableFrameException extends Exception {

    public UndecodableFrameException(String reason) {
        super(reason);
    }

    public UndecodableFrameException(String reason, Throwable cause) {
        super(reason, cause);
    }
}
