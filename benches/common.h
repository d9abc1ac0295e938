/*
 * common.h — what the C drivers of every harness under benches/ share: failing loudly, the
 * command line's numbers, reading a file, the clock, and recognising a response frame.
 *
 * Header-only (static inline functions) because each driver is one translation unit.
 */
#ifndef BENCHES_COMMON_H
#define BENCHES_COMMON_H

#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The whole file, NUL-terminated; *len gets its length. */
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

#endif /* BENCHES_COMMON_H */
