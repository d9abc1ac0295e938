package dev.hearth.examples;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.hearth.Engine;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A tiny JVM host: Hearth runs inside this process. Opens a session in the current directory,
 * asks one question and prints the answer as it streams in (the stop reason goes to stderr).
 *
 * <p>The config comes from {@code HEARTH_CONFIG} (default: an in-memory store); the engine reads
 * the provider from the environment ({@code OPENAI_API_KEY}, and {@code OPENAI_BASE_URL} for
 * any OpenAI-compatible server).
 */
public final class Ask {
    /** Requests in flight, by id: the listener completes them when their response arrives. */
    private final Map<Long, CompletableFuture<JsonObject>> pending = new ConcurrentHashMap<>();

    private long nextId = 1;

    /** Set once started; the listener answers the agent's own requests through it. */
    private volatile Engine engine;

    private Ask() {}

    public static void main(String[] args) throws Exception {
        String question = args.length > 0 ? String.join(" ", args) : "Hello! What can you do?";
        String config = System.getenv().getOrDefault("HEARTH_CONFIG", "{\"dataDir\": \":memory:\"}");
        try {
            String stopReason = new Ask().ask(config, question);
            System.err.println("[" + stopReason + "]");
        } catch (IllegalStateException e) { // a JSON-RPC error, e.g. no credential: it says what to set
            System.err.println("hearth: " + e.getMessage());
            System.exit(1);
        }
    }

    private String ask(String config, String question) throws Exception {
        try (Engine engine = new Engine(config, this::onFrame)) {
            this.engine = engine;
            JsonObject init = new JsonObject();
            init.addProperty("protocolVersion", 1);
            call(engine, "initialize", init);

            JsonObject newSession = new JsonObject();
            newSession.addProperty("cwd", System.getProperty("user.dir"));
            newSession.add("mcpServers", new JsonArray());
            String sessionId = call(engine, "session/new", newSession).get("sessionId").getAsString();

            JsonObject text = new JsonObject();
            text.addProperty("type", "text");
            text.addProperty("text", question);
            JsonArray prompt = new JsonArray();
            prompt.add(text);
            JsonObject promptParams = new JsonObject();
            promptParams.addProperty("sessionId", sessionId);
            promptParams.add("prompt", prompt);
            JsonObject done = call(engine, "session/prompt", promptParams);
            System.out.println();
            return done.get("stopReason").getAsString();
        }
    }

    /** Sends a request and waits for its result; a JSON-RPC error is thrown. */
    private JsonObject call(Engine engine, String method, JsonObject params) throws Exception {
        long id = nextId++;
        CompletableFuture<JsonObject> response = new CompletableFuture<>();
        pending.put(id, response);
        JsonObject frame = new JsonObject();
        frame.addProperty("jsonrpc", "2.0");
        frame.addProperty("id", id);
        frame.addProperty("method", method);
        frame.add("params", params);
        engine.send(frame.toString());
        JsonObject answer = response.get();
        if (answer.has("error")) {
            throw new IllegalStateException(method + " failed: " + answer.get("error"));
        }
        return answer.getAsJsonObject("result");
    }

    /** Runs on the engine's delivery thread: prints answer text, completes responses. */
    private void onFrame(String text) {
        JsonObject frame = JsonParser.parseString(text).getAsJsonObject();
        if (frame.has("id") && frame.has("method")) {
            answerAgentRequest(frame);
        } else if (frame.has("id")) {
            CompletableFuture<JsonObject> waiting = pending.remove(frame.get("id").getAsLong());
            if (waiting != null) {
                waiting.complete(frame);
            }
        } else if (frame.has("method") && frame.get("method").getAsString().equals("session/update")) {
            JsonObject update = frame.getAsJsonObject("params").getAsJsonObject("update");
            if (update.get("sessionUpdate").getAsString().equals("agent_message_chunk")
                    && update.getAsJsonObject("content").get("type").getAsString().equals("text")) {
                System.out.print(update.getAsJsonObject("content").get("text").getAsString());
                System.out.flush();
            }
        }
    }

    /**
     * The agent asks its client for things too. This host offers no file system or terminal,
     * and grants nothing: a permission request is answered "cancelled", anything else with
     * "method not found".
     */
    private void answerAgentRequest(JsonObject request) {
        JsonObject answer = new JsonObject();
        answer.addProperty("jsonrpc", "2.0");
        answer.add("id", request.get("id"));
        if (request.get("method").getAsString().equals("session/request_permission")) {
            JsonObject outcome = new JsonObject();
            outcome.addProperty("outcome", "cancelled");
            JsonObject result = new JsonObject();
            result.add("outcome", outcome);
            answer.add("result", result);
        } else {
            JsonObject error = new JsonObject();
            error.addProperty("code", -32601);
            error.addProperty("message", "Method not found");
            answer.add("error", error);
        }
        engine.send(answer.toString());
    }
}
