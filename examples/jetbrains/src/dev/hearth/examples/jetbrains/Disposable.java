package dev.hearth.examples.jetbrains;

/**
 * The shape of IntelliJ's {@code com.intellij.openapi.Disposable}: something with a lifetime
 * that its parent ends. Declared here so the example compiles against the Hearth jar alone; in
 * a plugin, implement the platform's interface instead and nothing else changes.
 */
public interface Disposable {
    void dispose();
}
