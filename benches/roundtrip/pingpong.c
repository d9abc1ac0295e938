/*
 * pingpong.c — the reference row, no Hearth at all: the same timed loop as the other C
 * drivers, but each "request" is handed to a second thread, which wakes up and hands the
 * "response" straight back. That is the thread hand-off structure of an in-process round trip
 * (caller → engine's delivery thread → waiting caller: two sleeping threads woken) with no
 * work in between, so it shows what this machine charges for the wake-ups alone.
 *
 *   pingpong REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD    (CONFIG_FILE and METHOD are ignored)
 */
#include "bench.h"

#include <pthread.h>
#include <stdbool.h>

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t to_worker, to_caller;
    long requested, answered; /* ids, under lock */
    bool stop;
} pingpong;

/* The stand-in for the engine's delivery thread: sleeps until a request comes in. */
static void *worker(void *arg) {
    pingpong *pp = arg;
    pthread_mutex_lock(&pp->lock);
    for (;;) {
        while (pp->requested == pp->answered && !pp->stop) pthread_cond_wait(&pp->to_worker, &pp->lock);
        if (pp->stop) break;
        pp->answered = pp->requested;
        /* Like c_host's on_frame, which runs with no lock held: signal outside the lock. */
        pthread_mutex_unlock(&pp->lock);
        pthread_cond_signal(&pp->to_caller);
        pthread_mutex_lock(&pp->lock);
    }
    pthread_mutex_unlock(&pp->lock);
    return NULL;
}

static void round_trip(void *ctx, long id, const char *frame, size_t len) {
    pingpong *pp = ctx;
    (void)frame, (void)len; /* only the hand-off is measured */
    pthread_mutex_lock(&pp->lock);
    pp->requested = id;
    pthread_mutex_unlock(&pp->lock);
    pthread_cond_signal(&pp->to_worker);
    pthread_mutex_lock(&pp->lock);
    while (pp->answered != id) pthread_cond_wait(&pp->to_caller, &pp->lock);
    pthread_mutex_unlock(&pp->lock);
}

int main(int argc, char **argv) {
    bench_args args = parse_args(argc, argv);
    pingpong pp = {
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .to_worker = PTHREAD_COND_INITIALIZER,
        .to_caller = PTHREAD_COND_INITIALIZER,
    };
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, &pp) != 0) die("pingpong: cannot start a thread");
    measure(&args, round_trip, &pp);
    pthread_mutex_lock(&pp.lock);
    pp.stop = true;
    pthread_cond_signal(&pp.to_worker);
    pthread_mutex_unlock(&pp.lock);
    pthread_join(thread, NULL);
    return 0;
}
