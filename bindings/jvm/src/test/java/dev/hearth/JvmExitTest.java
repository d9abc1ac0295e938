package dev.hearth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine never keeps a JVM from exiting: its delivery thread is attached as a daemon and
 * detached at close, and its other threads are not Java threads at all.
 */
class JvmExitTest {
    /**
     * Far above the second or two a JVM takes to start and stop on a busy 2-core machine; a
     * JVM held by a non-daemon thread would never exit, since the delivery thread waits for
     * frames until close.
     */
    private static final long EXIT_SECONDS = 20;

    @Test
    void theJvmExitsPromptlyAfterClose(@TempDir Path dir) throws Exception {
        String output = runChildJvm(dir, "close");
        assertTrue(output.contains("\"protocolVersion\":1"), output);
    }

    @Test
    void theJvmExitsPromptlyEvenIfTheEngineIsNeverClosed(@TempDir Path dir) throws Exception {
        String output = runChildJvm(dir, "leave-open");
        assertTrue(output.contains("\"protocolVersion\":1"), output);
    }

    /** Runs {@link ExitMain} in a child JVM; returns its output once it has exited cleanly. */
    private static String runChildJvm(Path dir, String mode) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path output = dir.resolve("child-output.txt");
        Process child = new ProcessBuilder(List.of(
                        java.toString(),
                        "-Xcheck:jni",
                        "-D" + NativeLibrary.PATH_PROPERTY + "=" + System.getProperty(NativeLibrary.PATH_PROPERTY),
                        "-cp", System.getProperty("hearth.test.classpath"),
                        ExitMain.class.getName(),
                        mode))
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        boolean exited = child.waitFor(EXIT_SECONDS, TimeUnit.SECONDS);
        if (!exited) {
            child.destroyForcibly().waitFor();
        }
        String printed = Files.readString(output);
        assertTrue(exited, "the child JVM was still running after " + EXIT_SECONDS + " s:\n" + printed);
        assertEquals(0, child.exitValue(), printed);
        assertFalse(printed.contains("WARNING in native method"), "-Xcheck:jni complained:\n" + printed);
        return printed;
    }
}
