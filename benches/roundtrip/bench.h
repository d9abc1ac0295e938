/*
 * bench.h — what the C drivers (c_host.c, stdio_host.c, pingpong.c) share: the command line,
 * the request frames and the timed loop that writes the samples (the helpers every harness's
 * C drivers use, such as recognising a response, are in ../common.h).
 *
 * Every driver of this harness, in every language, does the same thing (see README.md):
 *
 *   driver REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD
 *
 * sends one untimed `initialize` (the engine answers nothing else before it), then WARMUP
 * untimed METHOD requests, then REQUESTS timed ones, one at a time (the next request goes out
 * only once the previous response is in), and writes one latency per line, in nanoseconds,
 * to SAMPLES_FILE. METHOD is `initialize` or `session/list`. summarize.py turns the files into
 * the table.
 *
 * Header-only (static inline functions) because each driver is one translation unit.
 */
#ifndef ROUNDTRIP_BENCH_H
#define ROUNDTRIP_BENCH_H

#include "../common.h"

/* The longest request frame, `initialize` with a 20-digit id, fits easily. */
#define REQUEST_CAP 160

typedef struct {
    long requests;
    long warmup;
    const char *samples_path;
    const char *config_path;
    const char *method;
    const char *params; /* METHOD's, from request_params */
} bench_args;

/* The two requests a driver can time; both are read-only and idempotent, so every request of
 * a run takes the same path:
 * - `initialize` is answered on the caller's thread inside send and touches no store: the
 *   cost of the way in plus one trip through the engine's outbox;
 * - `session/list` (no cursor, no cwd) is the first page of the store's sessions: the engine
 *   reads it from SQLite, so it adds what answering from the store costs. */
static inline const char *request_params(const char *method) {
    if (strcmp(method, "initialize") == 0) return "{\"protocolVersion\":1,\"clientCapabilities\":{}}";
    if (strcmp(method, "session/list") == 0) return "{}";
    die("METHOD must be initialize or session/list, not `%s`", method);
    return NULL;
}

static inline bench_args parse_args(int argc, char **argv) {
    if (argc != 6) die("usage: %s REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD", argv[0]);
    return (bench_args){
        .requests = parse_count(argv[1], "REQUESTS"),
        .warmup = parse_count(argv[2], "WARMUP"),
        .samples_path = argv[3],
        .config_path = argv[4],
        .method = argv[5],
        .params = request_params(argv[5]),
    };
}

static inline size_t format_request(char *out, long id, const char *method, const char *params) {
    int n = snprintf(out, REQUEST_CAP, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":%s}", id,
                     method, params);
    if (n < 0 || n >= REQUEST_CAP) die("a request longer than %d bytes", REQUEST_CAP);
    return (size_t)n;
}

/* Sends `frame` (request `id`) and returns once its response has arrived. Fails loudly
 * (die) on anything unexpected rather than hanging or timing garbage. */
typedef void (*round_trip_fn)(void *ctx, long id, const char *frame, size_t len);

/* The measurement every C driver shares: the `initialize` the engine needs before anything
 * else, the warm-up, the timed requests, then the samples file. Ids run on from one request
 * to the next so no two share one. */
static inline void measure(const bench_args *args, round_trip_fn round_trip, void *ctx) {
    uint64_t *samples = malloc(sizeof *samples * (size_t)(args->requests ? args->requests : 1));
    if (!samples) die("out of memory");
    char frame[REQUEST_CAP];
    const char *method = args->method, *params = args->params;
    long id = 1;
    round_trip(ctx, id, frame, format_request(frame, id, "initialize", request_params("initialize")));
    id++;
    for (long i = 0; i < args->warmup; i++, id++) round_trip(ctx, id, frame, format_request(frame, id, method, params));
    for (long i = 0; i < args->requests; i++, id++) {
        size_t len = format_request(frame, id, method, params); /* built before the clock starts */
        uint64_t start = now_ns();
        round_trip(ctx, id, frame, len);
        samples[i] = now_ns() - start;
    }
    FILE *out = fopen(args->samples_path, "w");
    if (!out) die("cannot write %s: %s", args->samples_path, strerror(errno));
    for (long i = 0; i < args->requests; i++) fprintf(out, "%llu\n", (unsigned long long)samples[i]);
    if (fclose(out) != 0) die("cannot write %s: %s", args->samples_path, strerror(errno));
    free(samples);
}

#endif /* ROUNDTRIP_BENCH_H */
