package dev.hearth;

/**
 * The JNI surface, implemented in Rust ({@code bindings/jvm/src/main/rust/exports.rs}).
 *
 * <p>A handle is the address of the native engine. {@link Engine} owns it: it passes it back
 * to {@link #release(long)} exactly once, when no call can still be using it.
 */
final class NativeEngine {
    static {
        NativeLibrary.load();
    }

    private NativeEngine() {}

    /** Starts an engine; throws {@link HearthException} if it can't. */
    static native long create(String configJson, FrameListener listener);

    /** Queues a frame; throws {@link IllegalStateException} once the engine is closed. */
    static native void send(long handle, String frame);

    /**
     * Stops the engine and waits until it has stopped; idempotent. Throws
     * {@link IllegalStateException} on the engine's own delivery thread.
     */
    static native void close(long handle);

    /** Frees the handle, closing the engine first if it is still open. */
    static native void release(long handle);
}
