package dev.hearth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A whole ACP session through the binding, against the scripted mock LLM. */
class SessionTest {
    private static final String SCRIPT =
            "{\"responses\": [{\"events\": [{\"text\": \"Hello\"}, {\"text\": \" world\"}], \"finish\": \"stop\"}]}";

    @Test
    void promptStreamsTheModelsAnswerThenEndsTheTurn(@TempDir Path cwd) throws Exception {
        Inbox inbox = new Inbox();
        try (MockLlm mock = MockLlm.start(SCRIPT);
                Engine engine = new Engine(Frames.mockConfig(mock, "test-model"), inbox)) {
            engine.send(Frames.initialize(1));
            JsonObject initialized = inbox.response(1);
            assertEquals(1, initialized.getAsJsonObject("result").get("protocolVersion").getAsInt());

            engine.send(Frames.newSession(2, cwd.toAbsolutePath().toString()));
            String sessionId = inbox.response(2).getAsJsonObject("result").get("sessionId").getAsString();

            engine.send(Frames.prompt(3, sessionId, "Say hello"));
            List<JsonObject> streamed = new ArrayList<>();
            JsonObject done = inbox.response(3, streamed);

            assertEquals("end_turn", done.getAsJsonObject("result").get("stopReason").getAsString());
            assertEquals("Hello world", agentText(streamed, sessionId));

            JsonArray requests = mock.requests();
            assertEquals(1, requests.size(), "one model request for one turn");
            JsonObject body = requests.get(0).getAsJsonObject().getAsJsonObject("body");
            assertEquals("test-model", body.get("model").getAsString());
            JsonArray messages = body.getAsJsonArray("messages");
            JsonObject last = messages.get(messages.size() - 1).getAsJsonObject();
            assertEquals("user", last.get("role").getAsString());
            assertTrue(last.get("content").toString().contains("Say hello"), last.toString());
        }
    }

    /** The text of the session's agent_message_chunk updates, in the order they arrived. */
    private static String agentText(List<JsonObject> frames, String sessionId) {
        return frames.stream()
                .filter(f -> f.has("method") && f.get("method").getAsString().equals("session/update"))
                .map(f -> f.getAsJsonObject("params"))
                .filter(p -> p.get("sessionId").getAsString().equals(sessionId))
                .map(p -> p.getAsJsonObject("update"))
                .filter(u -> u.get("sessionUpdate").getAsString().equals("agent_message_chunk"))
                .map(u -> u.getAsJsonObject("content").get("text").getAsString())
                .collect(Collectors.joining());
    }
}
