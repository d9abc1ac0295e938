package dev.hearth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** How the listener is called: on which thread, re-entrantly, and when it throws. */
class ListenerTest {
    @Test
    void aThrowingListenerIsLoggedAndDeliveryGoesOn() {
        List<LogRecord> logged = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(Engine.class.getName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                logged.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        boolean useParentHandlers = logger.getUseParentHandlers();
        logger.setUseParentHandlers(false); // the expected warnings would only clutter the report
        logger.addHandler(capture);
        try {
            Inbox inbox = new Inbox();
            try (Engine engine = new Engine(Frames.IN_MEMORY, frame -> {
                inbox.onFrame(frame);
                throw new IllegalArgumentException("listener failure on purpose");
            })) {
                engine.send(Frames.initialize(1));
                engine.send(Frames.initialize(2));
                assertEquals(1, inbox.response(1).get("id").getAsInt());
                assertEquals(2, inbox.response(2).get("id").getAsInt());
            }
        } finally {
            logger.removeHandler(capture);
            logger.setUseParentHandlers(useParentHandlers);
        }
        assertEquals(2, logged.size(), "one warning per frame");
        for (LogRecord record : logged) {
            assertEquals(Level.WARNING, record.getLevel());
            assertEquals("listener failure on purpose", record.getThrown().getMessage());
        }
    }

    @Test
    void listenerRunsOnOneDaemonThreadThatIsDetachedAtClose() {
        List<Thread> threads = new CopyOnWriteArrayList<>();
        Inbox inbox = new Inbox();
        Engine engine = new Engine(Frames.IN_MEMORY, frame -> {
            threads.add(Thread.currentThread());
            inbox.onFrame(frame);
        });
        for (int id = 1; id <= 3; id++) {
            engine.send(Frames.initialize(id));
            inbox.response(id);
        }
        engine.close();

        assertEquals(3, threads.size());
        Thread delivery = threads.get(0);
        threads.forEach(t -> assertSame(delivery, t, "attached once, reused for every frame"));
        assertNotSame(Thread.currentThread(), delivery);
        assertTrue(delivery.isDaemon(), "a daemon, so it never keeps the JVM alive");
        assertEquals("hearth-delivery", delivery.getName());
        assertFalse(delivery.isAlive(), "detached from the JVM by the time close() returns");
    }

    @Test
    void theListenerMaySendFromInsideDelivery() {
        AtomicReference<Engine> self = new AtomicReference<>();
        Inbox inbox = new Inbox();
        try (Engine engine = new Engine(Frames.IN_MEMORY, frame -> {
            JsonObject parsed = JsonParser.parseString(frame).getAsJsonObject();
            if (parsed.has("id") && parsed.get("id").getAsInt() == 1) {
                self.get().send(Frames.initialize(2));
            }
            inbox.onFrame(frame);
        })) {
            self.set(engine);
            engine.send(Frames.initialize(1));
            inbox.response(1);
            assertEquals(2, inbox.response(2).get("id").getAsInt());
        }
    }
}
