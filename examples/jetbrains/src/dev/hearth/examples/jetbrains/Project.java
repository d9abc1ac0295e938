package dev.hearth.examples.jetbrains;

import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Stands in for IntelliJ's {@code Project} and its {@code Disposer} tree: services registered
 * with a project are disposed when it closes, last registered first.
 */
public final class Project implements AutoCloseable {
    private final Path basePath;
    private final Deque<Disposable> children = new ArrayDeque<>();

    public Project(Path basePath) {
        this.basePath = basePath.toAbsolutePath();
    }

    public Path basePath() {
        return basePath;
    }

    /** Like {@code Disposer.register(project, child)}. */
    public synchronized void register(Disposable child) {
        children.push(child);
    }

    /** Closing the project disposes its services, as the IDE does. */
    @Override
    public void close() {
        for (;;) {
            Disposable next;
            synchronized (this) {
                next = children.poll();
            }
            if (next == null) {
                return;
            }
            next.dispose();
        }
    }
}
