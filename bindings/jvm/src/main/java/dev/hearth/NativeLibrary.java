package dev.hearth;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Finds and loads the native library, {@code libhearth_jni}, from the first of: the
 * {@code hearth.library.path} property; the copy the distribution jar carries (extracted to a
 * cache directory by {@link BundledLibrary}); {@code java.library.path}.
 *
 * <p>A native library can be loaded by one class loader only, once per JVM; the caller
 * ({@link NativeEngine}'s static initializer) makes sure this runs once.
 */
final class NativeLibrary {
    /** The library's base name, as {@link System#loadLibrary(String)} takes it. */
    static final String NAME = "hearth_jni";

    /**
     * System property naming the library file, or a directory holding it. Hosts that ship the
     * library inside their own distribution (an IDE plugin extracting it from its jar, say)
     * set this; otherwise the library is looked up on {@code java.library.path}.
     */
    static final String PATH_PROPERTY = "hearth.library.path";

    private NativeLibrary() {}

    static void load() {
        String configured = System.getProperty(PATH_PROPERTY);
        if (configured == null || configured.isBlank()) {
            loadBundledOrFromLibraryPath();
            return;
        }
        Path path = Path.of(configured);
        if (Files.isDirectory(path)) {
            path = path.resolve(System.mapLibraryName(NAME));
        }
        if (!Files.isRegularFile(path)) {
            // System.load would only say "Can't load library"; say which setting led here.
            throw new UnsatisfiedLinkError(PATH_PROPERTY + "=" + configured + ": no library at " + path
                    + " (build it with `cargo build -p hearth-jvm`)");
        }
        System.load(path.toAbsolutePath().toString());
    }

    private static void loadBundledOrFromLibraryPath() {
        Path bundled = BundledLibrary.extract();
        if (bundled != null) {
            System.load(bundled.toString());
            return;
        }
        try {
            System.loadLibrary(NAME);
        } catch (UnsatisfiedLinkError e) {
            // Most often a jar built for other platforms: say which one this is, and the ways out.
            UnsatisfiedLinkError error = new UnsatisfiedLinkError("Hearth has no native library for "
                    + BundledLibrary.platform() + ": the jar carries none under "
                    + BundledLibrary.resourceName() + " and " + System.mapLibraryName(NAME)
                    + " is not on java.library.path. Use a hearth jar built for this platform, or set -D"
                    + PATH_PROPERTY + " to the library (" + e.getMessage() + ")");
            error.initCause(e);
            throw error;
        }
    }
}
