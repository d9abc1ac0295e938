package dev.hearth.examples.jetbrains;

import dev.hearth.Engine;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A project-level service, as a JetBrains plugin declares one ({@code <projectService>} or
 * {@code @Service(Service.Level.PROJECT)}): it owns one Hearth {@link Engine} for its project
 * and closes it in {@link #dispose()}, which the IDE calls when the project closes. Hearth runs
 * inside the IDE's own JVM; frames go in through {@link Engine#send} and come back on the
 * engine's delivery thread, where this service matches responses to the requests it sent.
 *
 * <p>A real plugin would feed the chunks to a tool window and map
 * {@code session/request_permission} to a dialog; this one streams text to a callback and,
 * having no UI to ask with, declines every permission request (the agent then carries on
 * without that tool call).
 */
public final class HearthProjectService implements Disposable {
    private final Project project;
    private final Engine engine;
    private final AtomicLong nextId = new AtomicLong(1);
    private final Map<Long, CompletableFuture<Object>> pending = new ConcurrentHashMap<>();
    private final Map<String, Consumer<String>> textListeners = new ConcurrentHashMap<>();
    private final CompletableFuture<Object> initialized;

    /**
     * @param configJson the Hearth config: a plugin builds it from its settings, with the API key
     *     taken from the IDE's PasswordSafe, never from an environment variable
     */
    public HearthProjectService(Project project, String configJson) {
        this.project = project;
        this.engine = new Engine(configJson, this::onFrame);
        project.register(this);
        initialized = request("initialize", "{\"protocolVersion\":1,\"clientCapabilities\":"
                + "{\"fs\":{\"readTextFile\":false,\"writeTextFile\":false},\"terminal\":false},"
                + "\"clientInfo\":{\"name\":\"hearth-jetbrains-example\",\"version\":\"0.1.0\"}}");
    }

    /**
     * Asks one question in a new session rooted at the project; {@code onText} receives the
     * answer as it streams. Completes with the turn's stop reason.
     */
    public CompletableFuture<String> ask(String prompt, Consumer<String> onText) {
        return initialized
                .thenCompose(ignored -> request("session/new",
                        "{\"cwd\":" + Json.quote(project.basePath().toString()) + ",\"mcpServers\":[]}"))
                .thenCompose(session -> {
                    String sessionId = (String) Json.at(session, "sessionId");
                    textListeners.put(sessionId, onText);
                    return request("session/prompt", "{\"sessionId\":" + Json.quote(sessionId)
                                    + ",\"prompt\":[{\"type\":\"text\",\"text\":" + Json.quote(prompt) + "}]}")
                            .whenComplete((result, error) -> textListeners.remove(sessionId));
                })
                .thenApply(result -> (String) Json.at(result, "stopReason"));
    }

    /** Called by the IDE when the project closes: cancels turns, flushes sessions, stops threads. */
    @Override
    public void dispose() {
        engine.close();
        IllegalStateException closed = new IllegalStateException("the project was closed");
        pending.values().forEach(future -> future.completeExceptionally(closed));
    }

    private CompletableFuture<Object> request(String method, String paramsJson) {
        long id = nextId.getAndIncrement();
        CompletableFuture<Object> result = new CompletableFuture<>();
        pending.put(id, result);
        engine.send("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":" + Json.quote(method)
                + ",\"params\":" + paramsJson + "}");
        return result;
    }

    /** The engine's delivery thread: one frame at a time, in order. */
    private void onFrame(String frame) {
        Object message = Json.parse(frame);
        Object method = Json.at(message, "method");
        Object id = Json.at(message, "id");
        if ("session/update".equals(method)) {
            onUpdate(message);
        } else if ("session/request_permission".equals(method)) {
            // Re-entrant send from the listener is allowed; the id is echoed as it came.
            engine.send("{\"jsonrpc\":\"2.0\",\"id\":" + jsonId(id)
                    + ",\"result\":{\"outcome\":{\"outcome\":\"cancelled\"}}}");
        } else if (method == null && id instanceof Double number) {
            CompletableFuture<Object> future = pending.remove(number.longValue());
            if (future == null) {
                return;
            }
            Object error = Json.at(message, "error");
            if (error != null) {
                future.completeExceptionally(new IllegalStateException("Hearth: " + Json.at(error, "message")));
            } else {
                future.complete(Json.at(message, "result"));
            }
        }
    }

    private void onUpdate(Object message) {
        Object params = Json.at(message, "params");
        Consumer<String> listener = textListeners.get(String.valueOf(Json.at(params, "sessionId")));
        Object update = Json.at(params, "update");
        if (listener != null
                && "agent_message_chunk".equals(Json.at(update, "sessionUpdate"))
                && "text".equals(Json.at(update, "content", "type"))) {
            listener.accept((String) Json.at(update, "content", "text"));
        }
    }

    private static String jsonId(Object id) {
        if (id instanceof Double number && number == Math.rint(number)) {
            return Long.toString(number.longValue());
        }
        return id instanceof String s ? Json.quote(s) : String.valueOf(id);
    }
}
