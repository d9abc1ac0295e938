/*
 * bench.h — what the two C drivers (c_host.c, stdio_host.c) share: the command line, the
 * request frame, recognising its response, and the timed loop that writes the samples.
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

#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The longest request frame: the template below with a 20-digit id fits easily. */
#define REQUEST_CAP 160

typedef struct {
    long requests;
    long warmup;
    const char *samples_path;
    const char *config_path;
} bench_args;

static inline void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static inline long parse_count(const char *text, const char *what) {
    char *end;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (errno || *end || n < 0) die("%s must be a non-negative integer, not `%s`", what, text);
    return n;
}

static inline bench_args parse_args(int argc, char **argv) {
    if (argc != 5) die("usage: %s REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE", argv[0]);
    return (bench_args){
        .requests = parse_count(argv[1], "REQUESTS"),
        .warmup = parse_count(argv[2], "WARMUP"),
        .samples_path = argv[3],
        .config_path = argv[4],
    };
}

/* The whole config file, NUL-terminated; *len gets its length. */
static inline char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    char *text = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) {
            cap = cap * 2 + 4096;
            text = realloc(text, cap);
            if (!text) die("out of memory");
        }
        got = fread(text + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    if (ferror(f)) die("cannot read %s", path);
    fclose(f);
    text[n] = '\0';
    *len = n;
    return text;
}

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/* The id of `frame` if it is a successful response, else -1. The engine writes compact
 * JSON with `jsonrpc`, `id`, `result` in that order, so a prefix check is enough; it is also
 * the cheapest honest check, the same in every driver, so no host pays for a JSON parser. */
static inline long response_id(const char *frame, size_t len) {
    static const char prefix[] = "{\"jsonrpc\":\"2.0\",\"id\":";
    static const char result[] = ",\"result\":";
    if (len < sizeof prefix - 1 || memcmp(frame, prefix, sizeof prefix - 1) != 0) return -1;
    const char *p = frame + sizeof prefix - 1, *end = frame + len;
    long id = 0;
    if (p == end || *p < '0' || *p > '9') return -1;
    while (p < end && *p >= '0' && *p <= '9') id = id * 10 + (*p++ - '0');
    if ((size_t)(end - p) < sizeof result - 1 || memcmp(p, result, sizeof result - 1) != 0) return -1;
    return id;
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
