package dev.hearth;

import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A listener that queues what the engine delivers, for the test thread to wait on. */
final class Inbox implements FrameListener {
    /** Generous: the CI machine is small and busy; a healthy engine answers in milliseconds. */
    private static final long WAIT_SECONDS = 30;

    private final BlockingQueue<JsonObject> frames = new LinkedBlockingQueue<>();

    @Override
    public void onFrame(String frame) {
        frames.add(JsonParser.parseString(frame).getAsJsonObject());
    }

    JsonObject next() {
        try {
            JsonObject frame = frames.poll(WAIT_SECONDS, TimeUnit.SECONDS);
            if (frame == null) {
                fail("no frame arrived within " + WAIT_SECONDS + " s");
            }
            return frame;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for a frame", e);
        }
    }

    /** Waits for the response to request {@code id}, skipping the frames before it. */
    JsonObject response(long id) {
        return response(id, new ArrayList<>());
    }

    /** Waits for the response to request {@code id}; the frames before it go to {@code before}. */
    JsonObject response(long id, List<JsonObject> before) {
        while (true) {
            JsonObject frame = next();
            boolean answer = frame.has("result") || frame.has("error");
            if (answer && frame.has("id") && frame.get("id").getAsLong() == id) {
                return frame;
            }
            before.add(frame);
        }
    }
}
