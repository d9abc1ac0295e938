/*
 * c_host.c — the in-process C host of the throughput harness: libhearth (release) linked in,
 * one engine on a copy of the prepared data directory, one `session/load` whose replayed
 * `session/update` frames are counted (see README.md).
 *
 *   c_host CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE
 *
 * Writes `FRAMES ELAPSED_NS DELIVERY_CPU_NS MAIN_CPU_NS` to RESULT_FILE, like every driver.
 * PAUSE_MS > 0 is the drained mode: the first frame's callback sleeps that long, so the engine
 * queues the rest of the replay meanwhile, and the clock starts when it wakes.
 *
 * on_frame does what every driver's callback does and no more: a prefix check, a count, and
 * for a response, the clock and a wake-up of the main thread, which waits on a condition
 * variable as a real native host would.
 */
#include "../common.h"
#include "hearth.h"

#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#define INITIALIZE_ID 1
#define LOAD_ID 2

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t answered_cond;
    long answered;        /* id of the last response, under lock */
    uint64_t answered_ns; /* when it arrived, under lock */
    /* Written by the delivery thread only; the main thread reads them after taking the lock
     * that the load response was handed over under, so it sees their final values. */
    long updates;
    uint64_t resumed_ns; /* drained mode: when the first frame's pause ended */
    long pause_ms;
} counter;

static int is_update(const char *frame, size_t len) {
    static const char prefix[] = "{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",";
    return len >= sizeof prefix - 1 && memcmp(frame, prefix, sizeof prefix - 1) == 0;
}

/* Runs on the engine's delivery thread. */
static void on_frame(void *user_data, const char *frame, size_t len) {
    counter *c = user_data;
    if (is_update(frame, len)) {
        if (c->updates++ == 0 && c->pause_ms > 0) {
            struct timespec pause = {.tv_sec = c->pause_ms / 1000, .tv_nsec = c->pause_ms % 1000 * 1000000};
            while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
            }
            c->resumed_ns = now_ns();
        }
        return;
    }
    long id = response_id(frame, len);
    if (id < 0) {
        /* _exit: the main thread is blocked waiting, there is nothing to unwind. */
        fprintf(stderr, "c_host: unexpected frame: %.*s\n", (int)len, frame);
        _exit(1);
    }
    uint64_t now = now_ns();
    pthread_mutex_lock(&c->lock);
    c->answered = id;
    c->answered_ns = now;
    pthread_mutex_unlock(&c->lock);
    pthread_cond_signal(&c->answered_cond);
}

typedef struct {
    uint64_t delivery, main; /* on-CPU ns so far */
} thread_cpu;

/* Nanoseconds thread `tid` has run on a CPU (the first number of its schedstat); 0 if the
 * thread has ended meanwhile. */
static uint64_t read_task_ns(long tid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
    FILE *f = fopen(path, "r");
    unsigned long long ns = 0;
    if (f) {
        if (fscanf(f, "%llu", &ns) != 1) ns = 0;
        fclose(f);
    }
    return ns;
}

static int is_delivery_thread(long tid) {
    char path[64], name[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%ld/comm", tid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (!fgets(name, sizeof name, f)) name[0] = '\0';
    fclose(f);
    return strcmp(name, "hearth-delivery\n") == 0;
}

/* How long the engine's delivery thread and the main thread have run, from the kernel's
 * per-thread accounting (schedstat: nanoseconds on a CPU). */
static thread_cpu read_thread_cpu(void) {
    thread_cpu cpu = {0, 0};
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) die("c_host: cannot list /proc/self/task");
    long pid = (long)getpid();
    for (struct dirent *t; (t = readdir(tasks));) {
        if (t->d_name[0] == '.') continue;
        long tid = strtol(t->d_name, NULL, 10);
        if (tid == pid) cpu.main += read_task_ns(tid);
        else if (is_delivery_thread(tid)) cpu.delivery += read_task_ns(tid);
    }
    closedir(tasks);
    return cpu;
}

/* Sends request `id` and returns when its response arrived (by the delivery thread's clock). */
static uint64_t call(hearth_engine *engine, counter *c, long id, const char *frame) {
    if (hearth_engine_send(engine, frame, strlen(frame)) != HEARTH_OK)
        die("c_host: send failed: %s", hearth_last_error());
    pthread_mutex_lock(&c->lock);
    while (c->answered != id) pthread_cond_wait(&c->answered_cond, &c->lock);
    uint64_t at = c->answered_ns;
    pthread_mutex_unlock(&c->lock);
    return at;
}

int main(int argc, char **argv) {
    if (argc != 5) die("usage: %s CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE", argv[0]);
    const char *session = argv[2], *result_path = argv[4];
    long pause_ms = parse_count(argv[3], "PAUSE_MS");
    size_t config_len;
    char *config = read_file(argv[1], &config_len);

    /* Lives on main's stack: the engine is freed (its delivery thread joined) before main
     * returns, so no free_user_data is needed. */
    counter c = {.lock = PTHREAD_MUTEX_INITIALIZER, .answered_cond = PTHREAD_COND_INITIALIZER, .pause_ms = pause_ms};
    hearth_engine *engine;
    if (hearth_engine_new(config, config_len, on_frame, &c, NULL, &engine) != HEARTH_OK)
        die("c_host: cannot start the engine: %s", hearth_last_error());
    free(config);

    char frame[512];
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"initialize\","
             "\"params\":{\"protocolVersion\":1,\"clientCapabilities\":{}}}",
             INITIALIZE_ID);
    call(engine, &c, INITIALIZE_ID, frame);
    int n = snprintf(frame, sizeof frame,
                     "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session/load\","
                     "\"params\":{\"sessionId\":\"%s\",\"cwd\":\"/tmp\",\"mcpServers\":[]}}",
                     LOAD_ID, session);
    if (n < 0 || (size_t)n >= sizeof frame) die("c_host: session id too long");
    thread_cpu before = read_thread_cpu();
    uint64_t start = now_ns();
    uint64_t end = call(engine, &c, LOAD_ID, frame);
    thread_cpu after = read_thread_cpu();
    if (pause_ms > 0) start = c.resumed_ns;

    FILE *out = fopen(result_path, "w");
    if (!out) die("c_host: cannot write %s: %s", result_path, strerror(errno));
    fprintf(out, "%ld %llu %llu %llu\n", c.updates, (unsigned long long)(end - start),
            (unsigned long long)(after.delivery - before.delivery), (unsigned long long)(after.main - before.main));
    if (fclose(out) != 0) die("c_host: cannot write %s", result_path);
    hearth_engine_free(engine);
    return 0;
}
