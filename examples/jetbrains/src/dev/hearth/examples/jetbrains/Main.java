package dev.hearth.examples.jetbrains;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Plays the IDE for one question: opens a "project" on the current directory, gets its Hearth
 * service, asks, prints the streamed answer, closes the project (which disposes the service).
 *
 * <pre>java -cp hearth-0.1.0.jar:classes dev.hearth.examples.jetbrains.Main CONFIG_FILE PROMPT</pre>
 *
 * No -D flags: the Hearth jar carries its native library and extracts it on first use.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Main CONFIG_FILE PROMPT");
            System.exit(2);
        }
        String config = Files.readString(Path.of(args[0]));
        String stopReason;
        try (Project project = new Project(Path.of(""))) {
            HearthProjectService service = new HearthProjectService(project, config);
            stopReason = service.ask(args[1], text -> {
                        System.out.print(text);
                        System.out.flush();
                    })
                    .get(120, TimeUnit.SECONDS);
        }
        System.out.println();
        System.out.println("[" + stopReason + "]");
        if (!"end_turn".equals(stopReason)) {
            System.exit(1);
        }
    }
}
