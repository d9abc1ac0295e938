package dev.hearth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Extraction of the jar's native library into the cache, as an IDE would trigger it: from two
 * threads at once, each through its own class loader (so each has its own copy of
 * {@link BundledLibrary}, as two plugins would). The payload is random bytes rather than the
 * real library: what is tested is the copy, not the load, and a library can be loaded by only
 * one class loader per JVM. scripts/package-check.sh loads the real one from two JVMs at once.
 */
class BundledLibraryTest {
    /** Big enough that two extractions really overlap. */
    private static final int PAYLOAD_BYTES = 8 << 20;
    private static final int ROUNDS = 10;

    @Test
    void twoClassLoadersExtractingAtOnceBothGetOneCompleteFile(@TempDir Path dir) throws Exception {
        byte[] payload = new byte[PAYLOAD_BYTES];
        new Random(14).nextBytes(payload);
        Path classpathEntry = fakeJarContents(dir.resolve("jar"), payload, sha256Hex(payload));
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                Path cache = dir.resolve("cache-" + round);
                CyclicBarrier start = new CyclicBarrier(2);
                try (URLClassLoader first = isolatedLoader(classpathEntry);
                        URLClassLoader second = isolatedLoader(classpathEntry)) {
                    Method extractFirst = extractMethod(first);
                    Method extractSecond = extractMethod(second);
                    assertNotSame(extractFirst.getDeclaringClass(), extractSecond.getDeclaringClass());
                    Future<Path> a = threads.submit(() -> {
                        start.await();
                        return (Path) extractFirst.invoke(null, cache);
                    });
                    Future<Path> b = threads.submit(() -> {
                        start.await();
                        return (Path) extractSecond.invoke(null, cache);
                    });
                    Path pathA = a.get();
                    Path pathB = b.get();
                    assertEquals(pathA, pathB);
                    assertArrayEquals(payload, Files.readAllBytes(pathA));
                    try (Stream<Path> files = Files.list(pathA.getParent())) {
                        // No temporary file is left behind, whoever won the race.
                        assertEquals(List.of(pathA), files.toList());
                    }
                }
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aDamagedCachedCopyIsReplaced(@TempDir Path dir) throws Exception {
        byte[] payload = "a library".getBytes();
        Path classpathEntry = fakeJarContents(dir.resolve("jar"), payload, sha256Hex(payload));
        Path cache = dir.resolve("cache");
        try (URLClassLoader loader = isolatedLoader(classpathEntry)) {
            Path library = (Path) extractMethod(loader).invoke(null, cache);
            Files.write(library, "a library, cut short by a crash".getBytes());
            assertEquals(library, extractMethod(loader).invoke(null, cache));
            assertArrayEquals(payload, Files.readAllBytes(library));
        }
    }

    @Test
    void aCorruptCopyInTheJarIsRefusedAndNothingIsLeftInTheCache(@TempDir Path dir) throws Exception {
        Path classpathEntry = fakeJarContents(dir.resolve("jar"), "bytes".getBytes(), "00".repeat(32));
        Path cache = dir.resolve("cache");
        try (URLClassLoader loader = isolatedLoader(classpathEntry)) {
            InvocationTargetException thrown = assertThrows(InvocationTargetException.class,
                    () -> extractMethod(loader).invoke(null, cache));
            assertTrue(thrown.getCause() instanceof UncheckedIOException, thrown.getCause().toString());
            assertTrue(thrown.getCause().getCause().getMessage().contains("corrupt"), thrown.getCause().toString());
        }
        try (Stream<Path> files = Files.walk(cache)) {
            assertTrue(files.noneMatch(Files::isRegularFile), "a file was left in the cache");
        }
    }

    @Test
    void withoutALibraryForThisPlatformThereIsNothingToExtract(@TempDir Path dir) {
        // The test class path (target/classes) carries no native/ directory.
        assertNull(BundledLibrary.extract(dir));
    }

    @Test
    void platformNamesFollowTheJarLayout() {
        String platform = BundledLibrary.platform();
        assertTrue(platform.matches("(linux|macos|windows|[a-z0-9]+)-[a-z0-9_]+"), platform);
        assertTrue(BundledLibrary.resourceName().startsWith("native/" + platform + "/"));
    }

    /**
     * A directory laid out like the distribution jar: the compiled binding classes plus
     * {@code native/<platform>/<library>} and its {@code .sha256}.
     */
    private static Path fakeJarContents(Path root, byte[] payload, String hash) throws Exception {
        Path classes = Path.of(BundledLibrary.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        copyTree(classes, root);
        Path library = root.resolve(BundledLibrary.resourceName());
        Files.createDirectories(library.getParent());
        Files.write(library, payload);
        Files.writeString(library.resolveSibling(library.getFileName() + ".sha256"),
                hash + "  " + library.getFileName() + "\n");
        return root;
    }

    private static void copyTree(Path from, Path to) throws Exception {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : (Iterable<Path>) paths::iterator) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(path, target);
                }
            }
        }
    }

    /** A loader that does not delegate to the test's own: it defines its own dev.hearth classes. */
    private static URLClassLoader isolatedLoader(Path classpathEntry) throws Exception {
        URL url = new File(classpathEntry.toString() + File.separator).toURI().toURL();
        return new URLClassLoader(new URL[] {url}, ClassLoader.getPlatformClassLoader());
    }

    private static Method extractMethod(ClassLoader loader) throws Exception {
        Method method = Class.forName(BundledLibrary.class.getName(), true, loader).getDeclaredMethod("extract", Path.class);
        method.setAccessible(true);
        return method;
    }

    private static String sha256Hex(byte[] bytes) throws Exception {
        return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
