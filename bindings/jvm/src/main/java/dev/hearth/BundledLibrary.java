package dev.hearth;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Properties;

/**
 * The native library the distribution jar carries, under {@code native/<platform>/} next to
 * its SHA-256 ({@code <library>.sha256}), and its extraction to a per-version cache directory.
 *
 * <p>A library can only be loaded from a file, so it is copied out of the jar once and reused.
 * Several JVMs (or class loaders of one JVM, as an IDE's plugins have) may extract at the same
 * moment, so nothing is ever written to the final name: each writer fills its own temporary
 * file in the cache directory, checks the hash, forces it to disk and renames it into place
 * atomically. A reader therefore sees either no file or a complete one; and since a file left
 * there could still have been damaged since, its hash is checked again before every load.
 */
final class BundledLibrary {
    /** System property: the cache directory (default: the platform's user cache, see {@link #cacheRoot}). */
    static final String CACHE_PROPERTY = "hearth.cache.dir";

    /** Where the jar keeps its libraries; the Maven coordinates and README name this layout. */
    static final String RESOURCE_ROOT = "native/";

    private BundledLibrary() {}

    /**
     * The platform's name in the jar's layout: {@code linux-x86_64}, {@code macos-aarch64},
     * {@code windows-x86_64}…, normalized from the JVM's own, inconsistent, names.
     */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            os = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            os = "macos";
        } else if (os.startsWith("windows")) {
            os = "windows";
        } else {
            os = os.replaceAll("[^a-z0-9]", "");
        }
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64", "x86_64", "x64" -> arch = "x86_64";
            case "aarch64", "arm64" -> arch = "aarch64";
            default -> arch = arch.replaceAll("[^a-z0-9_]", "");
        }
        return os + "-" + arch;
    }

    /** The library's resource path for this platform, e.g. {@code native/linux-x86_64/libhearth_jni.so}. */
    static String resourceName() {
        return RESOURCE_ROOT + platform() + "/" + System.mapLibraryName(NativeLibrary.NAME);
    }

    /**
     * Returns the extracted library, extracting it first if the cache lacks a good copy; or
     * {@code null} when this jar (or class path) has no library for this platform.
     *
     * @throws UncheckedIOException if the cache can't be written or the jar's copy is corrupt
     */
    static Path extract() {
        return extract(cacheRoot());
    }

    static Path extract(Path cacheRoot) {
        String resource = resourceName();
        ClassLoader loader = BundledLibrary.class.getClassLoader();
        String expected = readHash(loader, resource + ".sha256");
        if (expected == null || loader.getResource(resource) == null) {
            return null;
        }
        Path dir = cacheRoot.resolve(version()).resolve(platform());
        Path library = dir.resolve(System.mapLibraryName(NativeLibrary.NAME));
        try {
            if (Files.isRegularFile(library) && expected.equals(sha256(library))) {
                return library;
            }
            Files.createDirectories(dir);
            Path partial = Files.createTempFile(dir, library.getFileName().toString(), ".partial");
            try {
                String actual;
                try (InputStream in = loader.getResourceAsStream(resource)) {
                    actual = copyHashing(in, partial);
                }
                if (!expected.equals(actual)) {
                    throw new IOException(resource + " in the jar is corrupt: its SHA-256 is " + actual
                            + ", the jar says " + expected);
                }
                moveIntoPlace(partial, library);
            } finally {
                Files.deleteIfExists(partial);
            }
            syncDirectory(dir);
            return library;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract " + resource + " to " + dir
                    + " (set -D" + CACHE_PROPERTY + " to a writable directory, or -D"
                    + NativeLibrary.PATH_PROPERTY + " to an extracted library)", e);
        }
    }

    /**
     * The user's cache directory plus {@code hearth}: {@code $XDG_CACHE_HOME} or
     * {@code ~/.cache} on Linux, {@code ~/Library/Caches} on macOS, {@code %LOCALAPPDATA%} on
     * Windows; {@code -Dhearth.cache.dir} replaces it.
     */
    static Path cacheRoot() {
        String configured = System.getProperty(CACHE_PROPERTY);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        Path home = Path.of(System.getProperty("user.home"));
        String platform = platform();
        if (platform.startsWith("windows-") && System.getenv("LOCALAPPDATA") != null) {
            return Path.of(System.getenv("LOCALAPPDATA"), "hearth", "cache");
        }
        if (platform.startsWith("macos-")) {
            return home.resolve("Library").resolve("Caches").resolve("hearth");
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        return (xdg != null && !xdg.isBlank() ? Path.of(xdg) : home.resolve(".cache")).resolve("hearth");
    }

    /** The binding's version (Maven-filtered into hearth.properties): one cache directory per release. */
    static String version() {
        Properties properties = new Properties();
        try (InputStream in = BundledLibrary.class.getResourceAsStream("hearth.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return properties.getProperty("version", "unversioned");
    }

    private static String readHash(ClassLoader loader, String resource) {
        try (InputStream in = loader.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            // The sha256sum format: the hex digest, then optionally the file's name.
            String text = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
            return text.split("\\s+", 2)[0].toLowerCase(Locale.ROOT);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes {@code in} to {@code file}, forced to disk before returning; returns its SHA-256. */
    private static String copyHashing(InputStream in, Path file) throws IOException {
        MessageDigest digest = sha256Digest();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING);
                OutputStream out = Channels.newOutputStream(channel)) {
            new DigestInputStream(in, digest).transferTo(out);
            out.flush();
            channel.force(true);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    static String sha256(Path file) throws IOException {
        MessageDigest digest = sha256Digest();
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), digest)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    private static MessageDigest sha256Digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /**
     * Renames the complete file over the final name. Two writers racing here both rename a
     * verified copy of the same bytes, so whichever lands last is as good as the first.
     */
    private static void moveIntoPlace(Path partial, Path library) throws IOException {
        try {
            Files.move(partial, library, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            // Same directory, so this only happens on exotic file systems; a plain replace is
            // still never seen half-written by the hash check that precedes every load.
            Files.move(partial, library, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Makes the rename itself durable (POSIX); where directories can't be opened, there is nothing to do. */
    private static void syncDirectory(Path dir) {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            // Windows can't open a directory as a channel; NTFS journals the rename anyway.
        }
    }
}
