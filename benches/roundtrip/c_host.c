/*
 * c_host.c — the in-process C host: libhearth (release) linked in, one engine, sequential
 * round trips of one method (see bench.h for the command line and what is timed).
 *
 *   c_host REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD
 *
 * The main thread waits for the response, which arrives on the engine's delivery thread, on
 * a mutex + condition variable: what a real native host (a JNI/JNA plugin, an editor's C
 * core) does. The waiting thread sleeps in the kernel, so the figure includes one futex
 * wake-up of the waiting thread, a cost every blocking host pays. Spinning on an atomic
 * instead was tried: on the 2-vCPU benchmark machine it was no faster at the median and far
 * worse at p99, since the spinning thread takes the CPU the delivery thread needs.
 */
#include "bench.h"
#include "hearth.h"

#include <pthread.h>
#include <unistd.h>

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t answered_cond;
    long answered; /* id of the last response delivered, under lock */
} waiter;

/* Runs on the engine's delivery thread. */
static void on_frame(void *user_data, const char *frame, size_t len) {
    waiter *w = user_data;
    long id = response_id(frame, len);
    if (id < 0) {
        /* Only our responses are expected; anything else means the measurement is wrong.
         * _exit: the main thread is blocked waiting, there is nothing to unwind. */
        fprintf(stderr, "c_host: unexpected frame: %.*s\n", (int)len, frame);
        _exit(1);
    }
    pthread_mutex_lock(&w->lock);
    w->answered = id;
    pthread_mutex_unlock(&w->lock);
    /* Signalled after unlocking: signalled under the lock, the woken main thread would at
     * once block again on the mutex this thread still holds (one more futex round). */
    pthread_cond_signal(&w->answered_cond);
}

typedef struct {
    hearth_engine *engine;
    waiter *w;
} host;

static void round_trip(void *ctx, long id, const char *frame, size_t len) {
    host *h = ctx;
    if (hearth_engine_send(h->engine, frame, len) != HEARTH_OK) die("c_host: send failed: %s", hearth_last_error());
    pthread_mutex_lock(&h->w->lock);
    while (h->w->answered != id) pthread_cond_wait(&h->w->answered_cond, &h->w->lock);
    pthread_mutex_unlock(&h->w->lock);
}

int main(int argc, char **argv) {
    bench_args args = parse_args(argc, argv);
    if (hearth_abi_version() != HEARTH_ABI_VERSION)
        die("c_host: built for ABI %d, libhearth %s has ABI %u", HEARTH_ABI_VERSION, hearth_version(),
            (unsigned)hearth_abi_version());

    size_t config_len;
    char *config = read_file(args.config_path, &config_len);
    /* The waiter lives on main's stack: it outlives the engine, which is freed (and its
     * delivery thread joined) before main returns, so no free_user_data is needed. */
    waiter w = {.lock = PTHREAD_MUTEX_INITIALIZER, .answered_cond = PTHREAD_COND_INITIALIZER};
    host h = {.w = &w};
    if (hearth_engine_new(config, config_len, on_frame, &w, NULL, &h.engine) != HEARTH_OK)
        die("c_host: cannot start the engine: %s", hearth_last_error());
    free(config);

    measure(&args, round_trip, &h);
    hearth_engine_free(h.engine);
    return 0;
}
