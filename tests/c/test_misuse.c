/*
 * FFI misuse: everything a careless or hostile C host can do to libhearth *within* the
 * contract of include/hearth.h, checked for the right status codes and, when built with
 * -fsanitize=address (tests/c/run.sh, "ASan" section) or run under valgrind, for invalid
 * memory access and leaks.
 *
 * Usage: test_misuse            (no model needed: the provider is a closed local port)
 * Ends with "N passed, N failed"; exits non-zero on any failure.
 *
 * Undefined by contract, and so NOT exercised here (a test could only crash or corrupt
 * memory, proving nothing about Hearth):
 *   - hearth_engine_free twice on the same pointer, or any call with a freed engine: the
 *     engine is a heap object the first free releases; the ABI has no handle table that
 *     could detect a stale pointer. (free(NULL) is fine, and a free refused from inside
 *     on_frame leaves the engine valid: both are tested.)
 *   - hearth_engine_free concurrently with any other call on the same engine from another
 *     thread (on_frame excepted, which may send and gets HEARTH_CLOSED).
 *   - a `frame`/`config_json` pointer with fewer than `len` readable bytes; a `len` that
 *     lies; a callback that longjmps or throws out of on_frame.
 */
#define _POSIX_C_SOURCE 200809L

#include "hearth.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_SECONDS 120 /* valgrind makes 10 MB frames slow */
#define SUITE_SECONDS 1200
#define HUGE_BYTES (10u * 1024u * 1024u)

#define CONFIG \
    "{\"dataDir\":\":memory:\",\"providers\":{\"openai\":{\"baseUrl\":\"http://127.0.0.1:9/v1\",\"apiKey\":\"unused\",\"maxRetries\":0}}}"

static int passed, failed;

static void check(int ok, const char *what, int line) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL (line %d): %s\n", line, what);
}
#define CHECK(cond) check((cond) != 0, #cond, __LINE__)

static int contains(const char *haystack, const char *needle) {
    return haystack != NULL && strstr(haystack, needle) != NULL;
}

static void on_timeout(int signal_number) {
    static const char message[] = "FAIL: the misuse suite timed out: a call hung\n";
    (void)signal_number;
    (void)!write(STDERR_FILENO, message, sizeof message - 1);
    _exit(1);
}

/* ---------------------------------------------------------------------------------------- */
/* A host that keeps a bounded record: frame count, a few frames, answers per id             */

typedef enum {
    RECORD,
    CHAIN,            /* every answer to "chain-N" sends "chain-N+1" from on_frame, up to a limit */
    FREE_SELF,        /* hearth_engine_free(own engine) from on_frame, once */
    FREE_OTHER,       /* hearth_engine_free(other engine) from on_frame, once */
    SEND_OTHER,       /* hearth_engine_send(other engine) from on_frame, once */
    SEND_WHILE_FREED, /* once `closing` is set: send from every on_frame, record statuses */
    SEND_HUGE,        /* a 10 MB frame from on_frame, once */
} reaction;

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    long frames;
    long released;
    long frames_after_release;
    long unterminated;
    char last[4096]; /* the last frame, truncated */
    char *needle_hit; /* copy of the first frame matching `needle` */
    const char *needle;

    reaction react;
    hearth_engine *engine, *other;
    int reacted;
    int reaction_status;
    char reaction_error[512];
    long chain_sent, chain_limit;
    int closing;
    long closed_sends, ok_sends, other_sends;
    int holding, gate_open; /* SEND_WHILE_FREED: the answer to "gate" waits in on_frame */
    long nested; /* on_frame calls made while an on_frame (any host's) ran on the same thread */
} host;

static void host_init(host *h, reaction react) {
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->changed, NULL);
    h->react = react;
    h->reaction_status = -1;
}

static void host_destroy(host *h) {
    free(h->needle_hit);
    pthread_cond_destroy(&h->changed);
    pthread_mutex_destroy(&h->lock);
}

static int send_text(hearth_engine *engine, const char *frame) {
    return hearth_engine_send(engine, frame, strlen(frame));
}

static char *huge_request(const char *id_json) {
    /* {"jsonrpc":"2.0","id":ID,"method":"initialize","params":{"protocolVersion":1,"_meta":{"pad":"xxxx…"}}} */
    char head[256];
    snprintf(head, sizeof head,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1,\"_meta\":{\"pad\":\"",
             id_json);
    const char *tail = "\"}}}";
    size_t head_len = strlen(head), tail_len = strlen(tail);
    char *frame = malloc(HUGE_BYTES + 1);
    if (!frame) return NULL;
    memcpy(frame, head, head_len);
    memset(frame + head_len, 'x', HUGE_BYTES - head_len - tail_len);
    memcpy(frame + HUGE_BYTES - tail_len, tail, tail_len);
    frame[HUGE_BYTES] = '\0';
    return frame;
}

static void react(host *h, const char *frame) {
    switch (h->react) {
    case RECORD:
        break;
    case CHAIN: {
        const char *at = strstr(frame, "\"id\":\"chain-");
        if (!at) break;
        long n = strtol(at + strlen("\"id\":\"chain-"), NULL, 10);
        if (n + 1 >= h->chain_limit) break;
        char next[160];
        snprintf(next, sizeof next, "{\"jsonrpc\":\"2.0\",\"id\":\"chain-%ld\",\"method\":\"_x/none\"}", n + 1);
        int status = send_text(h->engine, next);
        if (status == HEARTH_OK) h->chain_sent++;
        else h->reaction_status = status;
        break;
    }
    case FREE_SELF:
        if (h->reacted++) break;
        hearth_engine_free(h->engine);
        snprintf(h->reaction_error, sizeof h->reaction_error, "%s", hearth_last_error() ? hearth_last_error() : "");
        h->reaction_status = send_text(h->engine, "{\"jsonrpc\":\"2.0\",\"id\":\"after-free-self\",\"method\":\"_x/none\"}");
        break;
    case FREE_OTHER:
        if (h->reacted++) break;
        hearth_engine_free(h->other);
        h->reaction_status = hearth_last_error() == NULL ? HEARTH_OK : -2;
        snprintf(h->reaction_error, sizeof h->reaction_error, "%s", hearth_last_error() ? hearth_last_error() : "");
        break;
    case SEND_OTHER:
        if (h->reacted++) break;
        h->reaction_status = send_text(h->other, "{\"jsonrpc\":\"2.0\",\"id\":\"cross\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
        break;
    case SEND_WHILE_FREED: {
        pthread_mutex_lock(&h->lock);
        if (strstr(frame, "\"id\":\"gate\"")) {
            h->holding = 1;
            pthread_cond_broadcast(&h->changed);
            while (!h->gate_open) pthread_cond_wait(&h->changed, &h->lock);
        }
        int closing = h->closing;
        pthread_mutex_unlock(&h->lock);
        if (!closing) break;
        int status = send_text(h->engine, "{\"jsonrpc\":\"2.0\",\"id\":\"late\",\"method\":\"_x/none\"}");
        pthread_mutex_lock(&h->lock);
        if (status == HEARTH_CLOSED) h->closed_sends++;
        else if (status == HEARTH_OK) h->ok_sends++;
        else h->other_sends++;
        pthread_mutex_unlock(&h->lock);
        break;
    }
    case SEND_HUGE:
        if (h->reacted++) break;
        {
            char *frame = huge_request("\"huge-from-callback\"");
            h->reaction_status = frame ? hearth_engine_send(h->engine, frame, HUGE_BYTES) : -3;
            free(frame);
        }
        break;
    }
}

/* How many on_frame calls, of any host, are running on this thread. */
static _Thread_local int on_frame_depth;

static void on_frame(void *user_data, const char *frame, size_t len) {
    host *h = user_data;
    int nested = on_frame_depth++ > 0;
    pthread_mutex_lock(&h->lock);
    h->nested += nested;
    h->frames++;
    if (h->released) h->frames_after_release++;
    if (frame[len] != '\0') h->unterminated++;
    size_t keep = len < sizeof h->last - 1 ? len : sizeof h->last - 1;
    memcpy(h->last, frame, keep);
    h->last[keep] = '\0';
    if (h->needle && !h->needle_hit && strstr(frame, h->needle)) {
        h->needle_hit = malloc(len + 1);
        memcpy(h->needle_hit, frame, len + 1);
    }
    pthread_mutex_unlock(&h->lock);
    react(h, frame);
    pthread_mutex_lock(&h->lock);
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
    on_frame_depth--;
}

static void release_host(void *user_data) {
    host *h = user_data;
    pthread_mutex_lock(&h->lock);
    h->released++;
    pthread_cond_broadcast(&h->changed);
    pthread_mutex_unlock(&h->lock);
}

static int start(host *h, hearth_engine **engine) {
    int status = hearth_engine_new(CONFIG, strlen(CONFIG), on_frame, h, release_host, engine);
    h->engine = *engine;
    if (status != HEARTH_OK) fprintf(stderr, "  hearth_engine_new: %d %s\n", status, hearth_last_error());
    return status;
}

/* Waits for a frame containing `needle` (set before the frame can arrive); returns a copy
 * owned by the host, or NULL after WAIT_SECONDS. */
static const char *wait_for(host *h, const char *needle) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WAIT_SECONDS;
    pthread_mutex_lock(&h->lock);
    while (!h->needle_hit) {
        if (pthread_cond_timedwait(&h->changed, &h->lock, &deadline) == ETIMEDOUT) break;
    }
    const char *hit = h->needle_hit;
    pthread_mutex_unlock(&h->lock);
    if (!hit) fprintf(stderr, "  no frame containing %s arrived; last: %.300s\n", needle, h->last);
    return hit;
}

static void expect_frame(host *h, const char *needle) {
    pthread_mutex_lock(&h->lock);
    free(h->needle_hit);
    h->needle_hit = NULL;
    h->needle = needle;
    pthread_mutex_unlock(&h->lock);
}

static long wait_count(host *h, long at_least) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WAIT_SECONDS;
    pthread_mutex_lock(&h->lock);
    while (h->frames < at_least)
        if (pthread_cond_timedwait(&h->changed, &h->lock, &deadline) == ETIMEDOUT) break;
    long frames = h->frames;
    pthread_mutex_unlock(&h->lock);
    return frames;
}

/* ---------------------------------------------------------------------------------------- */

static int user_data_frees;
static void count_free(void *p) {
    free(p);
    user_data_frees++;
}

static void test_nulls(void) {
    puts("# NULL arguments everywhere");
    hearth_engine *engine = (hearth_engine *)(uintptr_t)0x1; /* must be overwritten */
    int before = user_data_frees;
    CHECK(hearth_engine_new(NULL, 10, on_frame, malloc(8), count_free, &engine) == HEARTH_NULL_ARGUMENT);
    CHECK(engine == NULL);
    CHECK(contains(hearth_last_error(), "config_json"));
    CHECK(hearth_engine_new(CONFIG, strlen(CONFIG), NULL, malloc(8), count_free, &engine) == HEARTH_NULL_ARGUMENT);
    CHECK(hearth_engine_new(CONFIG, strlen(CONFIG), on_frame, malloc(8), count_free, NULL) == HEARTH_NULL_ARGUMENT);
    CHECK(hearth_engine_new(NULL, 0, NULL, malloc(8), count_free, NULL) == HEARTH_NULL_ARGUMENT);
    CHECK(user_data_frees == before + 4); /* user_data is owned by Hearth even on failure */
    /* NULL user_data and NULL free_user_data are allowed. */
    CHECK(hearth_engine_new(NULL, 0, on_frame, NULL, NULL, &engine) == HEARTH_NULL_ARGUMENT);

    CHECK(hearth_engine_send(NULL, NULL, 0) == HEARTH_NULL_ARGUMENT);
    CHECK(hearth_engine_send(NULL, "{}", 2) == HEARTH_NULL_ARGUMENT);
    CHECK(contains(hearth_last_error(), "engine"));

    host h;
    host_init(&h, RECORD);
    CHECK(start(&h, &engine) == HEARTH_OK);
    CHECK(hearth_engine_send(engine, NULL, 0) == HEARTH_NULL_ARGUMENT);
    CHECK(hearth_engine_send(engine, NULL, 12345) == HEARTH_NULL_ARGUMENT);
    CHECK(contains(hearth_last_error(), "frame"));
    /* A non-NULL empty frame is a frame: a parse error, answered. */
    expect_frame(&h, "-32700");
    CHECK(hearth_engine_send(engine, "", 0) == HEARTH_OK);
    CHECK(wait_for(&h, "-32700") != NULL);
    hearth_engine_free(engine);
    CHECK(h.released == 1);
    host_destroy(&h);

    for (int i = 0; i < 3; i++) hearth_engine_free(NULL);
    CHECK(hearth_last_error() == NULL);
    /* A thread that never called Hearth sees no error. */
    CHECK(hearth_version() != NULL && hearth_abi_version() == HEARTH_ABI_VERSION);
}

static void test_invalid_utf8(void) {
    puts("# invalid UTF-8: config and frames, every kind of broken sequence");
    static const char *const broken[] = {
        "\xff",                 /* never valid */
        "\xc0\xaf",             /* overlong '/' */
        "\xe0\x80\xaf",         /* overlong, 3 bytes */
        "\xed\xa0\x80",         /* UTF-16 surrogate */
        "\xf4\x90\x80\x80",     /* above U+10FFFF */
        "\x80",                 /* lone continuation */
        "\xe2\x82",             /* truncated at the end */
    };
    hearth_engine *engine = NULL;
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        char config[256];
        int n = snprintf(config, sizeof config, "{\"dataDir\":\":memory:\",\"model\":\"m%s\"}", broken[i]);
        CHECK(hearth_engine_new(config, (size_t)n, on_frame, NULL, NULL, &engine) == HEARTH_INVALID_UTF8);
        CHECK(engine == NULL);
    }

    host h;
    host_init(&h, RECORD);
    CHECK(start(&h, &engine) == HEARTH_OK);
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        /* Exactly `len` bytes, no terminator: ASan catches a read past the end. */
        char text[160];
        int n = snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"x%s\"}", i, broken[i]);
        char *exact = malloc((size_t)n);
        memcpy(exact, text, (size_t)n);
        CHECK(hearth_engine_send(engine, exact, (size_t)n) == HEARTH_INVALID_UTF8);
        CHECK(contains(hearth_last_error(), "UTF-8"));
        free(exact);
        /* The broken sequence last, cut mid-character by `len`. */
        snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xe2\x82\xac\"}");
        size_t cut = (size_t)(strchr(text, '\xe2') - text) + 1 + i % 2;
        CHECK(hearth_engine_send(engine, text, cut) == HEARTH_INVALID_UTF8);
    }
    /* Nothing was sent for any of them: the first frame out answers this. */
    expect_frame(&h, "\"id\":\"after-utf8\"");
    CHECK(send_text(engine, "{\"jsonrpc\":\"2.0\",\"id\":\"after-utf8\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}") == HEARTH_OK);
    CHECK(wait_for(&h, "\"id\":\"after-utf8\"") != NULL);
    CHECK(h.frames == 1);

    /* Valid UTF-8 that is not JSON: an embedded NUL, a lone BOM, controls. */
    static const char nul_inside[] = "{\"jsonrpc\":\"2.0\",\0\"id\":5}";
    expect_frame(&h, "-32700");
    CHECK(hearth_engine_send(engine, nul_inside, sizeof nul_inside - 1) == HEARTH_OK);
    CHECK(wait_for(&h, "-32700") != NULL);
    long frames = h.frames;
    CHECK(send_text(engine, "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"x\"}") == HEARTH_OK);
    CHECK(send_text(engine, "\x01\x02\x1b[31m") == HEARTH_OK);
    CHECK(wait_count(&h, frames + 2) == frames + 2);
    hearth_engine_free(engine);
    CHECK(h.unterminated == 0);
    host_destroy(&h);
}

static void test_huge_frames(void) {
    puts("# 10 MB frames: valid, garbage, broken UTF-8 at the very end, from on_frame");
    host h;
    hearth_engine *engine = NULL;
    host_init(&h, RECORD);
    CHECK(start(&h, &engine) == HEARTH_OK);

    char *frame = huge_request("\"huge\"");
    CHECK(frame != NULL);
    expect_frame(&h, "\"id\":\"huge\"");
    CHECK(hearth_engine_send(engine, frame, HUGE_BYTES) == HEARTH_OK);
    CHECK(contains(wait_for(&h, "\"id\":\"huge\""), "\"protocolVersion\":1"));

    /* 10 MB that never closes its string: a parse error, answered, not echoed whole. */
    frame[HUGE_BYTES - 4] = 'x';
    expect_frame(&h, "-32700");
    CHECK(hearth_engine_send(engine, frame, HUGE_BYTES) == HEARTH_OK);
    const char *answer = wait_for(&h, "-32700");
    CHECK(answer != NULL && strlen(answer) < 64 * 1024);

    /* 10 MB of valid JSON whose last byte breaks UTF-8. */
    frame[HUGE_BYTES - 1] = '\xc3';
    CHECK(hearth_engine_send(engine, frame, HUGE_BYTES) == HEARTH_INVALID_UTF8);

    /* A 10 MB prompt for a session that does not exist. */
    const char *head = "{\"jsonrpc\":\"2.0\",\"id\":\"huge-prompt\",\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"nope\",\"prompt\":[{\"type\":\"text\",\"text\":\"";
    size_t head_len = strlen(head);
    memcpy(frame, head, head_len);
    memset(frame + head_len, 'y', HUGE_BYTES - head_len - 5);
    memcpy(frame + HUGE_BYTES - 5, "\"}]}}", 5);
    expect_frame(&h, "\"id\":\"huge-prompt\"");
    CHECK(hearth_engine_send(engine, frame, HUGE_BYTES) == HEARTH_OK);
    CHECK(contains(wait_for(&h, "\"id\":\"huge-prompt\""), "\"error\""));
    free(frame);
    hearth_engine_free(engine);
    host_destroy(&h);

    host_init(&h, SEND_HUGE);
    CHECK(start(&h, &engine) == HEARTH_OK);
    expect_frame(&h, "\"id\":\"huge-from-callback\"");
    CHECK(send_text(engine, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}") == HEARTH_OK);
    CHECK(wait_for(&h, "\"id\":\"huge-from-callback\"") != NULL);
    CHECK(h.reaction_status == HEARTH_OK);
    hearth_engine_free(engine);
    host_destroy(&h);
}

static void test_reentrant_chain(void) {
    puts("# re-entrant sends: 2,000 frames, each sent from the on_frame of the previous answer");
    host h;
    hearth_engine *engine = NULL;
    host_init(&h, CHAIN);
    h.chain_limit = 2000;
    CHECK(start(&h, &engine) == HEARTH_OK);
    expect_frame(&h, "\"id\":\"chain-1999\"");
    CHECK(send_text(engine, "{\"jsonrpc\":\"2.0\",\"id\":\"chain-0\",\"method\":\"_x/none\"}") == HEARTH_OK);
    CHECK(wait_for(&h, "\"id\":\"chain-1999\"") != NULL);
    CHECK(h.chain_sent == 1999);
    CHECK(h.reaction_status == -1);
    hearth_engine_free(engine);
    CHECK(h.frames == 2000);
    host_destroy(&h);
}

static void test_free_from_callback(void) {
    puts("# hearth_engine_free from on_frame: own engine refused, another engine freed");
    host h;
    hearth_engine *engine = NULL;
    host_init(&h, FREE_SELF);
    CHECK(start(&h, &engine) == HEARTH_OK);
    expect_frame(&h, "\"id\":\"after-free-self\"");
    CHECK(send_text(engine, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_x/none\"}") == HEARTH_OK);
    CHECK(wait_for(&h, "\"id\":\"after-free-self\"") != NULL);
    CHECK(contains(h.reaction_error, "on_frame"));
    CHECK(h.reaction_status == HEARTH_OK);
    CHECK(h.released == 0);
    /* The refused free left it valid; freeing it now works, exactly once. */
    hearth_engine_free(engine);
    CHECK(hearth_last_error() == NULL);
    CHECK(h.released == 1);
    host_destroy(&h);

    host a, b;
    hearth_engine *engine_a = NULL, *engine_b = NULL;
    host_init(&a, FREE_OTHER);
    host_init(&b, RECORD);
    CHECK(start(&a, &engine_a) == HEARTH_OK);
    CHECK(start(&b, &engine_b) == HEARTH_OK);
    a.other = engine_b;
    expect_frame(&a, "\"id\":1");
    CHECK(send_text(engine_a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_x/none\"}") == HEARTH_OK);
    CHECK(wait_for(&a, "\"id\":1") != NULL);
    /* The reaction runs after the frame is recorded: wait for B's release. */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WAIT_SECONDS;
    pthread_mutex_lock(&b.lock);
    while (b.released == 0)
        if (pthread_cond_timedwait(&b.changed, &b.lock, &deadline) == ETIMEDOUT) break;
    pthread_mutex_unlock(&b.lock);
    CHECK(b.released == 1);
    hearth_engine_free(engine_a);
    CHECK(a.reaction_status == HEARTH_OK);
    if (a.reaction_status != HEARTH_OK) fprintf(stderr, "  hearth_last_error after freeing B: %s\n", a.reaction_error);
    CHECK(a.released == 1);
    host_destroy(&a);
    host_destroy(&b);
}

static void test_cross_engine_send(void) {
    puts("# hearth_engine_send on engine B from engine A's on_frame: queued for B, never nested");
    host a, b;
    hearth_engine *engine_a = NULL, *engine_b = NULL;
    host_init(&a, SEND_OTHER);
    host_init(&b, RECORD);
    CHECK(start(&a, &engine_a) == HEARTH_OK);
    CHECK(start(&b, &engine_b) == HEARTH_OK);
    a.other = engine_b;
    expect_frame(&b, "\"id\":\"cross\"");
    CHECK(send_text(engine_a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"_x/none\"}") == HEARTH_OK);
    CHECK(wait_for(&b, "\"id\":\"cross\"") != NULL);
    hearth_engine_free(engine_a); /* joins A's delivery thread: its reaction is over */
    CHECK(a.reaction_status == HEARTH_OK);
    hearth_engine_free(engine_b);
    /* Wherever A's answer reached on_frame (inside send on this thread, or on A's delivery
     * thread: both run it marked as a callback), B's answer, made there, did not run inside
     * it. */
    CHECK(a.nested == 0);
    CHECK(b.nested == 0);
    host_destroy(&a);
    host_destroy(&b);
}

/* Sends "gate", whose answer on_frame holds: it is handed over on this thread, inside send. */
static void *send_gate(void *arg) {
    host *h = arg;
    if (send_text(h->engine, "{\"jsonrpc\":\"2.0\",\"id\":\"gate\",\"method\":\"_x/none\"}") != HEARTH_OK)
        h->other_sends++;
    return NULL;
}

static void test_send_during_free(void) {
    puts("# hearth_engine_send from on_frame while hearth_engine_free runs (a backlog of 20,000 answers)");
    host h;
    hearth_engine *engine = NULL;
    host_init(&h, SEND_WHILE_FREED);
    CHECK(start(&h, &engine) == HEARTH_OK);
    /* Answers made inside send with nothing ahead of them reach on_frame at once, on the
     * sending thread. So the backlog forms behind one such answer that on_frame holds on
     * another thread: every answer below is made while it is being handed over, so it is
     * queued for the delivery thread. */
    pthread_t gate;
    CHECK(pthread_create(&gate, NULL, send_gate, &h) == 0);
    pthread_mutex_lock(&h.lock);
    while (!h.holding) pthread_cond_wait(&h.changed, &h.lock);
    pthread_mutex_unlock(&h.lock);
    char frame[128];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"_x/none\"}", i);
        if (hearth_engine_send(engine, frame, (size_t)n) != HEARTH_OK) {
            CHECK(!"send failed");
            break;
        }
    }
    pthread_mutex_lock(&h.lock);
    h.closing = 1;
    h.gate_open = 1;
    pthread_cond_broadcast(&h.changed);
    pthread_mutex_unlock(&h.lock);
    CHECK(pthread_join(gate, NULL) == 0); /* no other thread may be in a call during the free */
    hearth_engine_free(engine);
    /* Whatever on_frame sent once the free had begun was refused or (before the engine
     * marked itself closed) accepted — never anything else, and nothing after the release. */
    CHECK(h.other_sends == 0);
    CHECK(h.released == 1);
    CHECK(h.frames_after_release == 0);
    printf("  on_frame during free: %ld refused (HEARTH_CLOSED), %ld accepted before the close; %ld frames\n",
           h.closed_sends, h.ok_sends, h.frames);
    host_destroy(&h);
}

typedef struct {
    hearth_engine *engine;
    int id_base;
    int failures;
} sender;

static void *send_many(void *arg) {
    sender *s = arg;
    char frame[128];
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"_x/none\"}", s->id_base + i);
        if (hearth_engine_send(s->engine, frame, (size_t)n) != HEARTH_OK) s->failures++;
        if (hearth_last_error() != NULL) s->failures++;
    }
    return NULL;
}

static void test_concurrent_senders(void) {
    puts("# 4 threads sending 2,000 frames each, then free");
    host h;
    hearth_engine *engine = NULL;
    host_init(&h, RECORD);
    CHECK(start(&h, &engine) == HEARTH_OK);
    pthread_t threads[4];
    sender senders[4];
    for (int i = 0; i < 4; i++) {
        senders[i] = (sender){engine, i * 100000, 0};
        pthread_create(&threads[i], NULL, send_many, &senders[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK(senders[i].failures == 0);
    }
    CHECK(wait_count(&h, 8000) == 8000);
    hearth_engine_free(engine);
    CHECK(h.frames == 8000);
    host_destroy(&h);
}

static void test_many_engines(void) {
    puts("# 50 engines started and freed (with a session each): nothing leaks");
    for (int i = 0; i < 50; i++) {
        host h;
        hearth_engine *engine = NULL;
        host_init(&h, RECORD);
        if (start(&h, &engine) != HEARTH_OK) {
            CHECK(!"hearth_engine_new failed");
            host_destroy(&h);
            break;
        }
        expect_frame(&h, "\"id\":2");
        send_text(engine, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
        send_text(engine, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp\",\"mcpServers\":[]}}");
        int answered = wait_for(&h, "\"id\":2") != NULL;
        /* Freed with requests possibly still in flight. */
        send_text(engine, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/list\",\"params\":{}}");
        hearth_engine_free(engine);
        if (!answered || h.released != 1) CHECK(!"engine round trip");
        host_destroy(&h);
    }
    CHECK(1);
}

int main(void) {
    signal(SIGALRM, on_timeout);
    alarm(SUITE_SECONDS);
    test_nulls();
    test_invalid_utf8();
    test_huge_frames();
    test_reentrant_chain();
    test_free_from_callback();
    test_cross_engine_send();
    test_send_during_free();
    test_concurrent_senders();
    test_many_engines();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
