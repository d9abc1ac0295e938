package dev.hearth;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** What a host can get wrong, and what it gets back: exceptions, never a crash or a hang. */
class MisuseTest {
    private static final Duration NO_DEADLOCK = Duration.ofSeconds(30);

    @Test
    void sendAfterCloseThrowsIllegalState() {
        Engine engine = new Engine(Frames.IN_MEMORY, frame -> {});
        engine.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> engine.send(Frames.initialize(1)));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    void closeTwiceIsFine() {
        Engine engine = new Engine(Frames.IN_MEMORY, frame -> {});
        engine.close();
        assertDoesNotThrow(engine::close);
    }

    @Test
    void concurrentClosesAllReturnOnceTheEngineHasStopped() throws Exception {
        CompletableFuture<Thread> delivery = new CompletableFuture<>();
        Inbox inbox = new Inbox();
        Engine engine = new Engine(Frames.IN_MEMORY, frame -> {
            delivery.complete(Thread.currentThread());
            inbox.onFrame(frame);
        });
        engine.send(Frames.initialize(1));
        inbox.response(1);
        Thread deliveryThread = delivery.get();

        int closers = 4;
        CountDownLatch start = new CountDownLatch(1);
        List<CompletableFuture<Void>> closed = new ArrayList<>();
        for (int i = 0; i < closers; i++) {
            closed.add(CompletableFuture.runAsync(() -> {
                awaitUninterruptibly(start);
                engine.close();
                // Whichever close returns, the engine has stopped by then: its thread is gone.
                assertFalse(deliveryThread.isAlive(), "close() returned before the engine stopped");
                assertThrows(IllegalStateException.class, () -> engine.send(Frames.initialize(2)));
            }));
        }
        start.countDown();
        CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    }

    @Test
    void closeFromInsideTheListenerThrowsInsteadOfDeadlocking() throws Exception {
        AtomicReference<Engine> self = new AtomicReference<>();
        CountDownLatch created = new CountDownLatch(1);
        CompletableFuture<Throwable> closeFromListener = new CompletableFuture<>();
        Inbox inbox = new Inbox();
        Engine engine = new Engine(Frames.IN_MEMORY, frame -> {
            awaitUninterruptibly(created);
            try {
                self.get().close();
                closeFromListener.complete(null);
            } catch (Throwable t) {
                closeFromListener.complete(t);
            }
            inbox.onFrame(frame);
        });
        self.set(engine);
        created.countDown();

        engine.send(Frames.initialize(1));
        Throwable thrown = closeFromListener.get(30, TimeUnit.SECONDS);
        assertInstanceOf(IllegalStateException.class, thrown);
        assertTrue(thrown.getMessage().contains("inside"), thrown.getMessage());

        // The refused close left the engine open and working; a close from here still works.
        inbox.response(1);
        engine.send(Frames.initialize(2));
        assertEquals(2, inbox.response(2).get("id").getAsInt());
        assertTimeoutPreemptively(NO_DEADLOCK, engine::close);
    }

    @Test
    void badConfigThrowsHearthExceptionNamingTheKey() {
        HearthException zero = assertThrows(HearthException.class,
                () -> new Engine("{\"workerThreads\": 0}", frame -> {}));
        assertTrue(zero.getMessage().contains("workerThreads"), zero.getMessage());

        HearthException typo = assertThrows(HearthException.class,
                () -> new Engine("{\"dataDri\": \":memory:\"}", frame -> {}));
        assertTrue(typo.getMessage().contains("dataDri"), typo.getMessage());

        HearthException wrongType = assertThrows(HearthException.class,
                () -> new Engine("{\"providers\": {\"openai\": {\"baseUrl\": 5}}}", frame -> {}));
        assertTrue(wrongType.getMessage().contains("providers.openai.baseUrl"), wrongType.getMessage());

        assertThrows(HearthException.class, () -> new Engine("{not json", frame -> {}));
    }

    @Test
    void aStoreThatCannotBeOpenedThrowsHearthException() throws Exception {
        Path notADirectory = Files.createTempFile("hearth-misuse", ".txt");
        try {
            JsonObject config = new JsonObject();
            config.addProperty("dataDir", notADirectory.toString());
            assertThrows(HearthException.class, () -> new Engine(config.toString(), frame -> {}));
        } finally {
            Files.delete(notADirectory);
        }
    }

    @Test
    void nullArgumentsThrowNullPointerException() {
        assertThrows(NullPointerException.class, () -> new Engine(null, frame -> {}));
        assertThrows(NullPointerException.class, () -> new Engine(Frames.IN_MEMORY, null));
        try (Engine engine = new Engine(Frames.IN_MEMORY, frame -> {})) {
            assertThrows(NullPointerException.class, () -> engine.send(null));
        }
    }

    @Test
    void aMalformedFrameIsAnsweredWithAJsonRpcError() {
        Inbox inbox = new Inbox();
        try (Engine engine = new Engine(Frames.IN_MEMORY, inbox)) {
            engine.send("this is not JSON");
            JsonObject answer = inbox.next();
            assertEquals(-32700, answer.getAsJsonObject("error").get("code").getAsInt());
        }
    }

    @Test
    void aForgottenEngineIsClosedOnceUnreachable() throws Exception {
        CompletableFuture<Thread> delivery = new CompletableFuture<>();
        startAndForget(delivery);
        Thread thread = delivery.get(30, TimeUnit.SECONDS);
        // The cleaner closes the engine after a GC finds it unreachable; its delivery thread
        // then ends. GC is only requested, so ask a few times.
        for (int attempt = 0; attempt < 100 && thread.isAlive(); attempt++) {
            System.gc();
            thread.join(100);
        }
        assertFalse(thread.isAlive(), "the engine's delivery thread outlived its engine");
    }

    /** Its own method, so no local variable of the test keeps the engine reachable. */
    private static void startAndForget(CompletableFuture<Thread> delivery) {
        Engine engine = new Engine(Frames.IN_MEMORY, frame -> delivery.complete(Thread.currentThread()));
        engine.send(Frames.initialize(1));
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
