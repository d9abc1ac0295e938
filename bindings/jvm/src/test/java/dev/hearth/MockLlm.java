package dev.hearth;

import com.google.gson.JsonArray;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The scripted mock LLM ({@code tests/mock-llm}) as a child process: a real HTTP server on
 * 127.0.0.1 that serves until its stdin closes, so it never outlives the test run.
 */
final class MockLlm implements AutoCloseable {
    private final Process process;
    private final String baseUrl;

    private MockLlm(Process process, String baseUrl) {
        this.process = process;
        this.baseUrl = baseUrl;
    }

    /** Starts the mock on {@code script} (its JSON format is in tests/mock-llm/README.md). */
    static MockLlm start(String script) throws IOException {
        Path binary = Path.of(System.getProperty("hearth.test.mockLlm", "hearth-mock-llm"));
        if (!Files.isExecutable(binary)) {
            throw new IOException(binary + " is missing: run `cargo build -p hearth-mock-llm` first");
        }
        Path scriptFile = Files.createTempFile("hearth-mock-script", ".json");
        Files.writeString(scriptFile, script);
        Process process = new ProcessBuilder(binary.toString(), "--script", scriptFile.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        var stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String baseUrl = stdout.readLine();
        // The mock has read its script by the time it prints its URL (or exits).
        Files.deleteIfExists(scriptFile);
        if (baseUrl == null) {
            process.destroy();
            throw new IOException("hearth-mock-llm exited without printing its URL");
        }
        return new MockLlm(process, baseUrl.trim());
    }

    /** Like {@code http://127.0.0.1:41234/v1}. */
    String baseUrl() {
        return baseUrl;
    }

    /** Every model request the mock received so far, oldest first. */
    JsonArray requests() throws IOException, InterruptedException {
        String root = baseUrl.substring(0, baseUrl.length() - "/v1".length());
        HttpRequest request = HttpRequest.newBuilder(URI.create(root + "/_mock/requests")).build();
        HttpResponse<String> response =
                HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        return JsonParser.parseString(response.body()).getAsJsonArray();
    }

    @Override
    public void close() throws IOException {
        process.getOutputStream().close();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
