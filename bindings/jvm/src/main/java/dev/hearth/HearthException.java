package dev.hearth;

/**
 * The engine could not start: an invalid configuration (the message names the offending key),
 * a store that cannot be opened, or threads that cannot be started.
 */
public class HearthException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what went wrong, as the engine reported it */
    public HearthException(String message) {
        super(message);
    }
}
