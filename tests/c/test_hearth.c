/*
 * The C ABI test: drives libhearth through include/hearth.h the way a native host does.
 *
 * Usage: test_hearth [path/to/hearth-mock-llm]   (tests/c/run.sh builds and runs it)
 *
 * The model is the scripted mock LLM, started here as a child process; nothing reaches the
 * internet. Ends with the line "N passed, N failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L

#include "hearth.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Generous, because the suite also runs under valgrind. */
#define WAIT_SECONDS 60
#define SUITE_SECONDS 900

/* For engines that never reach a model: a closed local port, so nothing can reach the internet;
 * a key, because session/new requires one. */
#define NO_MODEL_CONFIG \
    "{\"dataDir\":\":memory:\",\"providers\":{\"openai\":{\"baseUrl\":\"http://127.0.0.1:9/v1\",\"apiKey\":\"unused\"}}}"

#define INITIALIZE(id) "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}"
#define SESSION_NEW(id) \
    "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp\",\"mcpServers\":[]}}"
/* A response to request `id` starts like this in Hearth's compact JSON. */
#define RESPONSE_TO(id) "\"jsonrpc\":\"2.0\",\"id\":" #id ","

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

static int send_text(hearth_engine *engine, const char *frame) {
    return hearth_engine_send(engine, frame, strlen(frame));
}

/* A hung call must fail the suite, not stall CI. */
static void on_timeout(int signal_number) {
    static const char message[] = "FAIL: the suite timed out: a call hung\n";
    (void)signal_number;
    (void)!write(STDERR_FILENO, message, sizeof message - 1);
    _exit(1);
}

/* ---------------------------------------------------------------------------------------- */
/* The mock LLM as a child process                                                          */

typedef struct {
    pid_t pid;
    int stdin_fd; /* the mock serves until this pipe closes */
    char script_path[64];
    char url[256];
} mock_llm;

static int write_script(mock_llm *mock, const char *script_json) {
    strcpy(mock->script_path, "/tmp/hearth-c-test-XXXXXX");
    int fd = mkstemp(mock->script_path);
    if (fd < 0) return -1;
    size_t len = strlen(script_json);
    int ok = write(fd, script_json, len) == (ssize_t)len;
    close(fd);
    return ok ? 0 : -1;
}

static int mock_start(mock_llm *mock, const char *binary, const char *script_json) {
    int to_child[2], from_child[2];
    if (write_script(mock, script_json) != 0 || pipe(to_child) != 0 || pipe(from_child) != 0) return -1;
    /* Our ends must not leak into a later child, or this mock would never see its stdin close. */
    fcntl(to_child[1], F_SETFD, FD_CLOEXEC);
    fcntl(from_child[0], F_SETFD, FD_CLOEXEC);
    mock->pid = fork();
    if (mock->pid < 0) return -1;
    if (mock->pid == 0) {
        dup2(to_child[0], STDIN_FILENO);
        dup2(from_child[1], STDOUT_FILENO);
        close(to_child[0]);
        close(from_child[1]);
        execl(binary, binary, "--script", mock->script_path, (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    mock->stdin_fd = to_child[1];
    /* The mock prints exactly one line: its base URL. */
    size_t len = 0;
    char c;
    while (len + 1 < sizeof mock->url && read(from_child[0], &c, 1) == 1 && c != '\n') mock->url[len++] = c;
    mock->url[len] = '\0';
    close(from_child[0]);
    return strncmp(mock->url, "http://", 7) == 0 ? 0 : -1;
}

static void mock_stop(mock_llm *mock) {
    close(mock->stdin_fd);
    waitpid(mock->pid, NULL, 0);
    unlink(mock->script_path);
}

static void model_config(char *out, size_t cap, const char *base_url) {
    snprintf(out, cap,
             "{\"dataDir\":\":memory:\",\"model\":\"mock-model\","
             "\"providers\":{\"openai\":{\"baseUrl\":\"%s\",\"apiKey\":\"test-key\"}}}",
             base_url);
}

/* ---------------------------------------------------------------------------------------- */
/* The host: records every frame; some tests make on_frame call back into the engine        */

typedef enum {
    RECORD,               /* only record */
    SEND_ON_FIRST_FRAME,  /* hearth_engine_send(reaction_frame) from inside on_frame */
    FREE_ON_FIRST_FRAME,  /* hearth_engine_free(own engine) from inside on_frame, then send */
    SEND_WHILE_CLOSING,   /* once `closing` is set, send from every on_frame */
} reaction;

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    char **frames;
    size_t count, capacity;
    int unterminated;         /* frames without the promised NUL after `len` bytes */
    int released;             /* free_user_data calls */
    int frames_after_release; /* on_frame calls after free_user_data: must stay 0 */
    pthread_t first_thread;   /* the thread the first frame reached on_frame on */

    reaction react;
    hearth_engine *engine;      /* for the reactions; set before the first send */
    const char *reaction_frame; /* what the reaction sends */
    int reaction_status;        /* the status the reaction's last call returned */
    char reaction_error[512];   /* hearth_last_error() right after the reaction's free */
    int closing;                /* set just before hearth_engine_free */
    int closed_sends, other_sends;
} host;

static void host_init(host *h, reaction react) {
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->changed, NULL);
    h->react = react;
    h->reaction_status = -1;
}

static void host_destroy(host *h) {
    for (size_t i = 0; i < h->count; i++) free(h->frames[i]);
    free(h->frames);
    pthread_cond_destroy(&h->changed);
    pthread_mutex_destroy(&h->lock);
}

/* Runs inside on_frame (on the engine's delivery thread, or on the thread calling
 * hearth_engine_send), without our lock held: it calls into the engine. */
static void react(host *h, int first_frame, int closing) {
    if (h->react == SEND_ON_FIRST_FRAME && first_frame) {
        h->reaction_status = send_text(h->engine, h->reaction_frame);
    } else if (h->react == FREE_ON_FIRST_FRAME && first_frame) {
        hearth_engine_free(h->engine);
        const char *message = hearth_last_error();
        snprintf(h->reaction_error, sizeof h->reaction_error, "%s", message ? message : "");
        h->reaction_status = send_text(h->engine, h->reaction_frame); /* still running */
    } else if (h->react == SEND_WHILE_CLOSING && closing) {
        int status = send_text(h->engine, INITIALIZE(99));
        pthread_mutex_lock(&h->lock);
        if (status == HEARTH_CLOSED) h->closed_sends++;
        else h->other_sends++;
        pthread_mutex_unlock(&h->lock);
    }
}

static void on_frame(void *user_data, const char *frame, size_t len) {
    host *h = user_data;
    char *copy = malloc(len + 1);
    memcpy(copy, frame, len);
    copy[len] = '\0';
    pthread_mutex_lock(&h->lock);
    if (frame[len] != '\0' || strlen(frame) != len) h->unterminated++;
    if (h->released) h->frames_after_release++;
    if (h->count == h->capacity) {
        h->capacity = h->capacity ? 2 * h->capacity : 16;
        h->frames = realloc(h->frames, h->capacity * sizeof *h->frames);
    }
    h->frames[h->count++] = copy;
    int first_frame = h->count == 1, closing = h->closing;
    if (first_frame) h->first_thread = pthread_self();
    pthread_mutex_unlock(&h->lock);
    react(h, first_frame, closing);
    pthread_cond_broadcast(&h->changed);
}

static void release_host(void *user_data) {
    host *h = user_data;
    pthread_mutex_lock(&h->lock);
    h->released++;
    pthread_mutex_unlock(&h->lock);
}

static int start_engine(host *h, const char *config, hearth_engine **engine) {
    int status = hearth_engine_new(config, strlen(config), on_frame, h, release_host, engine);
    h->engine = *engine;
    return status;
}

/* An engine on a `:memory:` store whose model is the mock at `base_url`, reporting to `h`. */
static int start_model_engine(host *h, reaction react, const char *base_url, hearth_engine **engine) {
    char config[512];
    model_config(config, sizeof config, base_url);
    host_init(h, react);
    return start_engine(h, config, engine);
}

static const char *frame_at(host *h, long index) {
    pthread_mutex_lock(&h->lock);
    const char *frame = index >= 0 && (size_t)index < h->count ? h->frames[index] : NULL;
    pthread_mutex_unlock(&h->lock);
    return frame;
}

/* Waits for a frame containing `needle`; returns its index, or -1 after WAIT_SECONDS. */
static long wait_for(host *h, const char *needle) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WAIT_SECONDS;
    long found = -1;
    size_t seen = 0;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        for (; seen < h->count && found < 0; seen++)
            if (strstr(h->frames[seen], needle)) found = (long)seen;
        if (found >= 0 || pthread_cond_timedwait(&h->changed, &h->lock, &deadline) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&h->lock);
    if (found < 0) {
        fprintf(stderr, "  no frame containing %s arrived; got:\n", needle);
        for (size_t i = 0; i < h->count; i++) fprintf(stderr, "    %s\n", h->frames[i]);
    }
    return found;
}

/* Copies the sessionId of a session/new response into `out`. */
static int session_id(const char *frame, char *out, size_t cap) {
    const char *start = frame ? strstr(frame, "\"sessionId\":\"") : NULL;
    if (!start) return -1;
    start += strlen("\"sessionId\":\"");
    const char *end = strchr(start, '"');
    if (!end || (size_t)(end - start) >= cap) return -1;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return 0;
}

/* The text of the agent_message_chunk frames before index `end` (of `session` only, unless
 * NULL), concatenated. The scripted text has no JSON escapes, so it is copied as is. */
static void streamed_text(host *h, const char *session, long end, char *out, size_t cap) {
    size_t len = 0;
    out[0] = '\0';
    for (long i = 0; i < end; i++) {
        const char *frame = frame_at(h, i);
        if (session && !contains(frame, session)) continue;
        const char *text = contains(frame, "\"agent_message_chunk\"") ? strstr(frame, "\"text\":\"") : NULL;
        if (!text) continue;
        text += strlen("\"text\":\"");
        const char *stop = strchr(text, '"');
        size_t n = stop ? (size_t)(stop - text) : 0;
        if (len + n + 1 > cap) break;
        memcpy(out + len, text, n);
        len += n;
        out[len] = '\0';
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Tests                                                                                    */

static int tokens_freed;

/* free_user_data for calls that fail: those run it on the calling thread, before returning. */
static void free_token(void *token) {
    free(token);
    tokens_freed++;
}

/* Calls hearth_engine_new expecting a failure; checks that user_data was still freed exactly
 * once and that *out was set to NULL. Returns the status. */
static int new_failing(const char *config, size_t config_len, hearth_frame_fn frame_fn, int with_out) {
    hearth_engine *engine = (hearth_engine *)(uintptr_t)&tokens_freed; /* must be overwritten */
    int freed_before = tokens_freed;
    int status = hearth_engine_new(config, config_len, frame_fn, malloc(16), free_token, with_out ? &engine : NULL);
    CHECK(tokens_freed == freed_before + 1);
    if (with_out) CHECK(engine == NULL);
    return status;
}

static void test_versions(void) {
    puts("# versions");
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", HEARTH_VERSION_MAJOR, HEARTH_VERSION_MINOR, HEARTH_VERSION_PATCH);
    CHECK(hearth_abi_version() == HEARTH_ABI_VERSION);
    CHECK(strcmp(hearth_version(), expected) == 0);
}

static void test_null_arguments(void) {
    puts("# NULL arguments");
    const char *config = NO_MODEL_CONFIG;
    CHECK(new_failing(config, strlen(config), on_frame, 0) == HEARTH_NULL_ARGUMENT);
    CHECK(contains(hearth_last_error(), "out"));
    CHECK(new_failing(config, strlen(config), NULL, 1) == HEARTH_NULL_ARGUMENT);
    CHECK(contains(hearth_last_error(), "on_frame"));
    CHECK(new_failing(NULL, 0, on_frame, 1) == HEARTH_NULL_ARGUMENT);
    CHECK(contains(hearth_last_error(), "config_json"));

    CHECK(hearth_engine_send(NULL, INITIALIZE(1), strlen(INITIALIZE(1))) == HEARTH_NULL_ARGUMENT);
    CHECK(contains(hearth_last_error(), "engine"));
    host h;
    hearth_engine *engine = NULL;
    host_init(&h, RECORD);
    CHECK(start_engine(&h, config, &engine) == HEARTH_OK);
    CHECK(hearth_last_error() == NULL);
    CHECK(hearth_engine_send(engine, NULL, 0) == HEARTH_NULL_ARGUMENT);
    CHECK(contains(hearth_last_error(), "frame"));
    hearth_engine_free(engine);
    CHECK(h.released == 1);
    host_destroy(&h);

    hearth_engine_free(NULL); /* a no-op */
    CHECK(hearth_last_error() == NULL);
}

static void test_invalid_utf8(void) {
    puts("# invalid UTF-8");
    static const char latin1[] = "{\"model\":\"caf\xe9\"}";
    CHECK(new_failing(latin1, sizeof latin1 - 1, on_frame, 1) == HEARTH_INVALID_UTF8);
    CHECK(contains(hearth_last_error(), "UTF-8"));

    host h;
    hearth_engine *engine = NULL;
    host_init(&h, RECORD);
    CHECK(start_engine(&h, NO_MODEL_CONFIG, &engine) == HEARTH_OK);
    static const char broken[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\xc3\x28\"}";
    CHECK(hearth_engine_send(engine, broken, sizeof broken - 1) == HEARTH_INVALID_UTF8);
    CHECK(contains(hearth_last_error(), "UTF-8"));
    /* Nothing was sent: the first frame out answers the next, valid request. */
    CHECK(send_text(engine, INITIALIZE(2)) == HEARTH_OK);
    CHECK(wait_for(&h, RESPONSE_TO(2)) == 0);
    hearth_engine_free(engine);
    CHECK(h.count == 1);
    host_destroy(&h);
}

static void test_bad_config(void) {
    puts("# bad config");
    static const char zero_workers[] = "{\"dataDir\":\":memory:\",\"workerThreads\":0}";
    CHECK(new_failing(zero_workers, strlen(zero_workers), on_frame, 1) == HEARTH_BAD_CONFIG);
    CHECK(contains(hearth_last_error(), "workerThreads"));
    static const char unknown_key[] = "{\"dataDir\":\":memory:\",\"providers\":{\"openai\":{\"baseURL\":\"x\"}}}";
    CHECK(new_failing(unknown_key, strlen(unknown_key), on_frame, 1) == HEARTH_BAD_CONFIG);
    CHECK(contains(hearth_last_error(), "baseURL"));
    static const char not_json[] = "{\"dataDir\":";
    CHECK(new_failing(not_json, strlen(not_json), on_frame, 1) == HEARTH_BAD_CONFIG);
    CHECK(hearth_last_error() != NULL);
}

static void test_store_error(void) {
    puts("# store error");
    char dir[] = "/tmp/hearth-c-store-XXXXXX", db[64], config[160];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(db, sizeof db, "%s/hearth.db", dir);
    FILE *file = fopen(db, "w");
    CHECK(file != NULL);
    if (file) {
        fputs("this is not an SQLite database, and it is long enough to have a header\n", file);
        fclose(file);
    }
    snprintf(config, sizeof config, "{\"dataDir\":\"%s\"}", dir);
    CHECK(new_failing(config, strlen(config), on_frame, 1) == HEARTH_STORE_ERROR);
    CHECK(contains(hearth_last_error(), "hearth.db"));
    unlink(db);
    rmdir(dir);
}

static void test_reentrant_send(void) {
    puts("# hearth_engine_send from inside on_frame");
    host h;
    hearth_engine *engine = NULL;
    host_init(&h, SEND_ON_FIRST_FRAME);
    h.reaction_frame = SESSION_NEW(2);
    CHECK(start_engine(&h, NO_MODEL_CONFIG, &engine) == HEARTH_OK);
    CHECK(send_text(engine, INITIALIZE(1)) == HEARTH_OK);
    char id[128];
    CHECK(session_id(frame_at(&h, wait_for(&h, RESPONSE_TO(2))), id, sizeof id) == 0);
    CHECK(h.reaction_status == HEARTH_OK);
    hearth_engine_free(engine);
    host_destroy(&h);
}

static void test_free_from_on_frame(void) {
    puts("# hearth_engine_free from inside on_frame");
    host h;
    hearth_engine *engine = NULL;
    host_init(&h, FREE_ON_FIRST_FRAME);
    h.reaction_frame = INITIALIZE(2);
    CHECK(start_engine(&h, NO_MODEL_CONFIG, &engine) == HEARTH_OK);
    CHECK(send_text(engine, INITIALIZE(1)) == HEARTH_OK);
    /* The refused free neither deadlocked nor freed: the send after it was answered. */
    CHECK(wait_for(&h, RESPONSE_TO(2)) >= 0);
    CHECK(contains(h.reaction_error, "on_frame"));
    CHECK(h.reaction_status == HEARTH_OK);
    CHECK(h.released == 0);
    CHECK(send_text(engine, INITIALIZE(3)) == HEARTH_OK);
    CHECK(wait_for(&h, RESPONSE_TO(3)) >= 0);
    hearth_engine_free(engine);
    CHECK(hearth_last_error() == NULL);
    CHECK(h.released == 1);
    host_destroy(&h);
}

static void test_full_session(const char *base_url) {
    puts("# a full session: initialize, session/new, a streamed prompt");
    char prompt[512], id[128], text[256];
    host h;
    hearth_engine *engine = NULL;
    CHECK(start_model_engine(&h, RECORD, base_url, &engine) == HEARTH_OK);

    CHECK(send_text(engine, INITIALIZE(1)) == HEARTH_OK);
    /* Answered at once, with nothing queued ahead: on_frame ran on this thread, inside send. */
    CHECK(contains(frame_at(&h, 0), RESPONSE_TO(1)));
    CHECK(pthread_equal(h.first_thread, pthread_self()));
    CHECK(contains(frame_at(&h, wait_for(&h, RESPONSE_TO(1))), "\"protocolVersion\":1"));
    CHECK(send_text(engine, SESSION_NEW(2)) == HEARTH_OK);
    CHECK(session_id(frame_at(&h, wait_for(&h, RESPONSE_TO(2))), id, sizeof id) == 0);

    snprintf(prompt, sizeof prompt,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"%s\","
             "\"prompt\":[{\"type\":\"text\",\"text\":\"Say hello.\"}]}}",
             id);
    CHECK(send_text(engine, prompt) == HEARTH_OK);
    long answer = wait_for(&h, RESPONSE_TO(3));
    CHECK(contains(frame_at(&h, answer), "\"stopReason\":\"end_turn\""));
    /* The chunks precede the answer to the prompt that produced them. */
    streamed_text(&h, NULL, answer, text, sizeof text);
    CHECK(strcmp(text, "Hello world") == 0);
    if (strcmp(text, "Hello world") != 0) fprintf(stderr, "  streamed: \"%s\"\n", text);

    CHECK(h.released == 0);
    hearth_engine_free(engine);
    CHECK(h.released == 1);
    CHECK(h.frames_after_release == 0);
    CHECK(h.unterminated == 0);
    host_destroy(&h);
}

static void test_send_while_closing(const char *base_url) {
    puts("# hearth_engine_send from on_frame while hearth_engine_free runs");
    char prompt[512], id[128];
    host h;
    hearth_engine *engine = NULL;
    CHECK(start_model_engine(&h, SEND_WHILE_CLOSING, base_url, &engine) == HEARTH_OK);
    CHECK(send_text(engine, INITIALIZE(1)) == HEARTH_OK);
    CHECK(send_text(engine, SESSION_NEW(2)) == HEARTH_OK);
    CHECK(session_id(frame_at(&h, wait_for(&h, RESPONSE_TO(2))), id, sizeof id) == 0);
    /* The scripted model stalls, so this prompt is still running when the engine closes. */
    snprintf(prompt, sizeof prompt,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"%s\","
             "\"prompt\":[{\"type\":\"text\",\"text\":\"Wait.\"}]}}",
             id);
    CHECK(send_text(engine, prompt) == HEARTH_OK);

    pthread_mutex_lock(&h.lock);
    h.closing = 1;
    pthread_mutex_unlock(&h.lock);
    hearth_engine_free(engine);

    /* The cancelled prompt was answered during the free, and on_frame's sends saw the close. */
    CHECK(contains(frame_at(&h, wait_for(&h, RESPONSE_TO(3))), "\"stopReason\":\"cancelled\""));
    CHECK(h.closed_sends >= 1);
    CHECK(h.other_sends == 0);
    CHECK(h.released == 1);
    CHECK(h.frames_after_release == 0);
    host_destroy(&h);
}

/* 100 sessions streaming at once into one host: each one's chunks arrive complete, in order,
 * before its prompt's answer, and each prompt is answered once. */
#define MANY_SESSIONS 100
#define MANY_WORDS 20

static void test_many_sessions(const char *base_url) {
    puts("# 100 sessions streaming at once");
    char frame[512], needle[64], expected[256] = "", text[256];
    static char ids[MANY_SESSIONS][128];
    for (int w = 0; w < MANY_WORDS; w++) snprintf(expected + strlen(expected), 8, "w%d ", w);
    host h;
    hearth_engine *engine = NULL;
    CHECK(start_model_engine(&h, RECORD, base_url, &engine) == HEARTH_OK);
    CHECK(send_text(engine, INITIALIZE(1)) == HEARTH_OK);
    for (int i = 0; i < MANY_SESSIONS; i++) {
        snprintf(frame, sizeof frame,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp\",\"mcpServers\":[]}}",
                 100 + i);
        snprintf(needle, sizeof needle, "\"jsonrpc\":\"2.0\",\"id\":%d,", 100 + i);
        CHECK(send_text(engine, frame) == HEARTH_OK);
        CHECK(session_id(frame_at(&h, wait_for(&h, needle)), ids[i], sizeof ids[i]) == 0);
    }
    for (int i = 0; i < MANY_SESSIONS; i++) {
        snprintf(frame, sizeof frame,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"%s\","
                 "\"prompt\":[{\"type\":\"text\",\"text\":\"go\"}]}}",
                 1000 + i, ids[i]);
        CHECK(send_text(engine, frame) == HEARTH_OK);
    }
    int complete = 0;
    for (int i = 0; i < MANY_SESSIONS; i++) {
        snprintf(needle, sizeof needle, "\"jsonrpc\":\"2.0\",\"id\":%d,", 1000 + i);
        long answer = wait_for(&h, needle);
        if (!contains(frame_at(&h, answer), "\"stopReason\":\"end_turn\"")) continue;
        streamed_text(&h, ids[i], answer, text, sizeof text);
        complete += strcmp(text, expected) == 0;
    }
    CHECK(complete == MANY_SESSIONS);
    hearth_engine_free(engine);
    /* Nothing arrived after the answers that was not expected: one answer per request. */
    long answers = 0;
    for (size_t i = 0; i < h.count; i++) answers += contains(h.frames[i], "\"id\":1") && contains(h.frames[i], "\"stopReason\"");
    CHECK(answers == MANY_SESSIONS);
    host_destroy(&h);
}

/* The mock's script for test_many_sessions: one streamed answer per session. */
static char *many_sessions_script(void) {
    char words[512] = "";
    for (int w = 0; w < MANY_WORDS; w++) snprintf(words + strlen(words), 32, "%s{\"text\":\"w%d \"}", w ? "," : "", w);
    size_t cap = 32 + MANY_SESSIONS * (strlen(words) + 32);
    char *script = malloc(cap);
    strcpy(script, "{\"responses\":[");
    for (int i = 0; i < MANY_SESSIONS; i++)
        snprintf(script + strlen(script), cap - strlen(script), "%s{\"events\":[%s]}", i ? "," : "", words);
    strcat(script, "]}");
    return script;
}

static void with_mock(const char *binary, const char *script, void (*test)(const char *)) {
    mock_llm mock;
    int started = mock_start(&mock, binary, script) == 0;
    CHECK(started);
    if (!started) {
        fprintf(stderr, "  could not start %s\n", binary);
        return;
    }
    test(mock.url);
    mock_stop(&mock);
}

int main(int argc, char **argv) {
    const char *mock_binary = argc > 1 ? argv[1] : "target/debug/hearth-mock-llm";
    signal(SIGALRM, on_timeout);
    alarm(SUITE_SECONDS);

    test_versions();
    test_null_arguments();
    test_invalid_utf8();
    test_bad_config();
    test_store_error();
    test_reentrant_send();
    test_free_from_on_frame();
    with_mock(mock_binary, "{\"responses\":[{\"events\":[{\"text\":\"Hello\"},{\"text\":\" world\"}],\"finish\":\"stop\"}]}",
              test_full_session);
    with_mock(mock_binary, "{\"responses\":[{\"events\":[{\"text\":\"Thinking\"},{\"stallMs\":600000}]}]}",
              test_send_while_closing);
    char *script = many_sessions_script();
    with_mock(mock_binary, script, test_many_sessions);
    free(script);

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
