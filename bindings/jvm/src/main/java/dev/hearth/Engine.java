package dev.hearth;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.Objects;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A Hearth engine running inside this JVM: an Agent Client Protocol (ACP) agent that takes
 * JSON-RPC frames from the client through {@link #send(String)} and hands its own frames to a
 * {@link FrameListener}.
 *
 * <pre>{@code
 * try (Engine engine = new Engine("{\"dataDir\": \":memory:\"}", frame -> System.out.println(frame))) {
 *     engine.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
 *     ...
 * }
 * }</pre>
 *
 * <p>Every method is thread-safe. Call {@link #close()} when done: it cancels running turns,
 * flushes the store and stops the engine's threads. An engine that is never closed is closed
 * when it becomes unreachable, but that may be never (a listener that refers to its engine keeps
 * it reachable) — the JVM can still exit, since the engine holds no non-daemon thread.
 */
public final class Engine implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Engine.class.getName());

    /** Frees native handles once their engine is unreachable; its thread is a daemon. */
    private static final Cleaner CLEANER = Cleaner.create();

    /**
     * The native engine. It stays valid for as long as this object is reachable: the cleaner
     * frees it only afterwards, so {@code send} and {@code close} never race with the free.
     */
    private final long handle;

    /**
     * Starts an engine.
     *
     * @param configJson the configuration, a JSON object ({@code ""} for all defaults), e.g.
     *     {@code {"dataDir": ":memory:", "model": "gpt-4o-mini",
     *     "providers": {"openai": {"baseUrl": "http://localhost:11434/v1"}}}}
     * @param listener receives every frame the engine sends; see {@link FrameListener}
     * @throws HearthException if the configuration is invalid (the message names the key) or
     *     the engine cannot start
     */
    public Engine(String configJson, FrameListener listener) {
        Objects.requireNonNull(configJson, "configJson");
        Objects.requireNonNull(listener, "listener");
        this.handle = NativeEngine.create(configJson, logFailures(listener));
        CLEANER.register(this, releasing(handle));
    }

    /**
     * Hands the engine one frame from the client (a JSON-RPC 2.0 message). Never blocks, and may
     * be called from inside the listener. Malformed frames are answered with JSON-RPC errors
     * through the listener, not thrown.
     *
     * @param frame one JSON-RPC message
     * @throws IllegalStateException if the engine is closed
     */
    public void send(String frame) {
        Objects.requireNonNull(frame, "frame");
        try {
            NativeEngine.send(handle, frame);
        } finally {
            // Keeps this object, and so the handle, alive until the native call has returned.
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Stops the engine: cancels running turns, flushes the store and joins the engine's threads.
     * Returns once that is done, after which the listener is never called again. Idempotent;
     * a concurrent second call returns when the first has finished.
     *
     * @throws IllegalStateException if called from inside the listener, which the close would
     *     otherwise wait for forever
     */
    @Override
    public void close() {
        try {
            NativeEngine.close(handle);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Whatever the user's listener throws is logged here and the engine goes on delivering: an
     * exception must never cross back into the engine's delivery thread.
     */
    private static FrameListener logFailures(FrameListener listener) {
        return frame -> {
            try {
                listener.onFrame(frame);
            } catch (Throwable t) {
                LOG.log(Level.WARNING, "FrameListener threw; the frame is dropped, delivery goes on", t);
            }
        };
    }

    /** Static so the cleaning action cannot capture {@code this}, which would keep it alive. */
    private static Runnable releasing(long handle) {
        return () -> NativeEngine.release(handle);
    }
}
