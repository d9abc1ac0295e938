/*
 * bench.h — what the two C drivers (c_host.c, stdio_host.c) share: the command line, the
 * request frame and the timed loop that writes the samples (the helpers every harness's C
 * drivers use, such as recognising a response, are in ../common.h).
 *
 * Every driver of this harness, in every language, does the same thing (see README.md):
 *
 *   driver REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE
 *
 * sends WARMUP untimed requests, then REQUESTS timed ones, one at a time (the next request
 * goes out only once the previous response is in), and writes one latency per line, in
 * nanoseconds, to SAMPLES_FILE. summarize.py turns the files into the table.
 *
 * Header-only (static inline functions) because each driver is one translation unit.
 */
#ifndef ROUNDTRIP_BENCH_H
#define ROUNDTRIP_BENCH_H

#include "../common.h"

/* The longest request frame: the template below with a 20-digit id fits easily. */
#define REQUEST_CAP 160

typedef struct {
    long requests;
    long warmup;
    const char *samples_path;
    const char *config_path;
} bench_args;

static inline bench_args parse_args(int argc, char **argv) {
    if (argc != 5) die("usage: %s REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE", argv[0]);
    return (bench_args){
        .requests = parse_count(argv[1], "REQUESTS"),
        .warmup = parse_count(argv[2], "WARMUP"),
        .samples_path = argv[3],
        .config_path = argv[4],
    };
}

/* The cheap request every driver times: `initialize` is answered on the caller's thread
 * inside send, touches no store, and is idempotent, so every request takes the same path. */
static inline size_t format_request(char *out, long id) {
    int n = snprintf(out, REQUEST_CAP,
                     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"initialize\","
                     "\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{}}}",
                     id);
    return (size_t)n;
}

/* Sends `frame` (request `id`) and returns once its response has arrived. Fails loudly
 * (die) on anything unexpected rather than hanging or timing garbage. */
typedef void (*round_trip_fn)(void *ctx, long id, const char *frame, size_t len);

/* The measurement every C driver shares: warm-up, then the timed requests, then the samples
 * file. Ids run on from the warm-up so no two requests share one. */
static inline void measure(const bench_args *args, round_trip_fn round_trip, void *ctx) {
    uint64_t *samples = malloc(sizeof *samples * (size_t)(args->requests ? args->requests : 1));
    if (!samples) die("out of memory");
    char frame[REQUEST_CAP];
    long id = 1;
    for (long i = 0; i < args->warmup; i++, id++) round_trip(ctx, id, frame, format_request(frame, id));
    for (long i = 0; i < args->requests; i++, id++) {
        size_t len = format_request(frame, id); /* built before the clock starts */
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
