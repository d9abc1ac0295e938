package dev.hearth;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;

/** Builds the client's frames and the engine configs the tests use. */
final class Frames {
    /** An engine that needs no model and leaves nothing on disk. */
    static final String IN_MEMORY = "{\"dataDir\": \":memory:\"}";

    private Frames() {}

    static String request(long id, String method, JsonObject params) {
        JsonObject frame = new JsonObject();
        frame.addProperty("jsonrpc", "2.0");
        frame.addProperty("id", id);
        frame.addProperty("method", method);
        frame.add("params", params);
        return frame.toString();
    }

    static String initialize(long id) {
        JsonObject params = new JsonObject();
        params.addProperty("protocolVersion", 1);
        params.add("clientCapabilities", new JsonObject());
        return request(id, "initialize", params);
    }

    static String newSession(long id, String cwd) {
        JsonObject params = new JsonObject();
        params.addProperty("cwd", cwd);
        params.add("mcpServers", new JsonArray());
        return request(id, "session/new", params);
    }

    static String prompt(long id, String sessionId, String text) {
        JsonObject block = new JsonObject();
        block.addProperty("type", "text");
        block.addProperty("text", text);
        JsonArray prompt = new JsonArray();
        prompt.add(block);
        JsonObject params = new JsonObject();
        params.addProperty("sessionId", sessionId);
        params.add("prompt", prompt);
        return request(id, "session/prompt", params);
    }

    /** An in-memory engine whose OpenAI-compatible provider is the mock LLM. */
    static String mockConfig(MockLlm mock, String model) {
        JsonObject openai = new JsonObject();
        openai.addProperty("baseUrl", mock.baseUrl());
        openai.addProperty("apiKey", "test-key-not-secret");
        JsonObject providers = new JsonObject();
        providers.add("openai", openai);
        JsonObject config = new JsonObject();
        config.addProperty("dataDir", ":memory:");
        config.addProperty("model", model);
        config.add("providers", providers);
        config.addProperty("streamIdleTimeoutSecs", 10);
        return config.toString();
    }
}
