package dev.hearth;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A tiny host run in a child JVM by {@link JvmExitTest}: starts an engine, gets one frame
 * through the listener (so the delivery thread is attached to the JVM), prints it, and then
 * closes the engine, or with {@code leave-open} does not.
 */
public final class ExitMain {
    private ExitMain() {}

    public static void main(String[] args) throws Exception {
        boolean close = !(args.length > 0 && args[0].equals("leave-open"));
        CompletableFuture<String> reply = new CompletableFuture<>();
        // Literal frames: the child JVM runs without the tests' JSON library on its class path.
        Engine engine = new Engine("{\"dataDir\": \":memory:\"}", reply::complete);
        engine.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
        System.out.println(reply.get(30, TimeUnit.SECONDS));
        if (close) {
            engine.close();
        }
    }
}
