package dev.hearth;

/**
 * Receives every frame the engine sends to the client: JSON-RPC 2.0 responses, notifications
 * such as {@code session/update}, and requests the agent makes of the client.
 *
 * <p>It runs on the engine's own delivery thread (a daemon thread named {@code hearth-delivery}),
 * one frame at a time and in the order the engine produced them, never concurrently — every
 * frame, including the answer to a request served at once, which this binding never hands over
 * on the thread calling {@link Engine#send(String)} (the C, Node and Python bindings do). It may call
 * {@link Engine#send(String)}, but must not call {@link Engine#close()} (that throws
 * {@link IllegalStateException}: close would wait for the listener to return). Whatever it
 * throws is logged and the engine goes on delivering. Keep it quick: frames queue up behind it.
 */
@FunctionalInterface
public interface FrameListener {
    /**
     * Handles one frame.
     *
     * @param frame a complete JSON-RPC message
     */
    void onFrame(String frame);
}
