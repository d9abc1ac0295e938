/*
 * c_host.c — 100 sessions streaming at once into one in-process C host (libhearth, release).
 *
 *   c_host CONFIG_FILE SESSIONS WORDS RESULT_FILE
 *
 * Opens SESSIONS sessions, then sends every session its prompt at once; the scripted mock
 * answers each with the same stream of words. Times the first prompt sent → the last prompt
 * answered, counting every frame in between, and checks on the fly that each session's
 * chunks arrive complete and in order (the words are numbered) and that each prompt is
 * answered once, after its last chunk. Writes "FRAMES NANOSECONDS" to RESULT_FILE.
 */
#include "../common.h"
#include "hearth.h"

#include <pthread.h>

#define MAX_SESSIONS 1000
#define ID_LEN 64

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    long frames;       /* every frame, counted from the first prompt on */
    long answered;     /* prompts answered */
    long created;      /* session/new answers */
    long sessions;
    long words;        /* words each stream carries */
    char ids[MAX_SESSIONS][ID_LEN];
    long next_word[MAX_SESSIONS]; /* the next word each session must receive */
} host;

static long session_index(host *h, const char *frame) {
    const char *at = strstr(frame, "\"sessionId\":\"");
    if (!at) return -1;
    at += strlen("\"sessionId\":\"");
    for (long i = 0; i < h->created; i++)
        if (strncmp(at, h->ids[i], strlen(h->ids[i])) == 0 && at[strlen(h->ids[i])] == '"') return i;
    return -1;
}

/* Each chunk's text is a run of words "wN "; they must continue the session's count. */
static void check_chunk(host *h, long session, const char *frame) {
    const char *text = strstr(frame, "\"text\":\"");
    if (!text) die("c_host: a chunk without text: %s", frame);
    text += strlen("\"text\":\"");
    while (*text == 'w') {
        char *end;
        long word = strtol(text + 1, &end, 10);
        if (word != h->next_word[session]) die("c_host: session %ld got word %ld, expected %ld", session, word, h->next_word[session]);
        h->next_word[session]++;
        text = end + 1; /* the space */
    }
}

static void on_frame(void *user_data, const char *frame, size_t len) {
    host *h = user_data;
    (void)len;
    pthread_mutex_lock(&h->lock);
    h->frames++;
    long id = response_id(frame, len);
    if (id >= 1000 && id < 1000 + h->sessions) {
        long session = id - 1000;
        if (h->next_word[session] != h->words) die("c_host: session %ld answered after %ld of %ld words", session, h->next_word[session], h->words);
        h->next_word[session] = -1; /* answered: nothing more may come */
        h->answered++;
    } else if (id >= 100 && id < 100 + h->sessions) {
        const char *at = strstr(frame, "\"sessionId\":\"");
        if (!at) die("c_host: session/new failed: %s", frame);
        at += strlen("\"sessionId\":\"");
        snprintf(h->ids[id - 100], ID_LEN, "%.*s", (int)(strchr(at, '"') - at), at);
        h->created++;
    } else if (strstr(frame, "\"agent_message_chunk\"")) {
        long session = session_index(h, frame);
        if (session < 0 || h->next_word[session] < 0) die("c_host: a chunk for no running prompt: %s", frame);
        check_chunk(h, session, frame);
    }
    pthread_mutex_unlock(&h->lock);
    pthread_cond_broadcast(&h->changed);
}

static void wait_until(host *h, long *counter, long target) {
    pthread_mutex_lock(&h->lock);
    while (*counter < target) pthread_cond_wait(&h->changed, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

static void send_frame(hearth_engine *engine, const char *frame) {
    if (hearth_engine_send(engine, frame, strlen(frame)) != HEARTH_OK) die("c_host: send failed: %s", hearth_last_error());
}

int main(int argc, char **argv) {
    if (argc != 5) die("usage: c_host CONFIG_FILE SESSIONS WORDS RESULT_FILE");
    static host h = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};
    h.sessions = parse_count(argv[2], "SESSIONS");
    h.words = parse_count(argv[3], "WORDS");
    if (h.sessions > MAX_SESSIONS) die("at most %d sessions", MAX_SESSIONS);
    size_t config_len;
    char *config = read_file(argv[1], &config_len);
    hearth_engine *engine;
    if (hearth_engine_new(config, config_len, on_frame, &h, NULL, &engine) != HEARTH_OK)
        die("c_host: cannot start the engine: %s", hearth_last_error());
    free(config);
    char frame[512];
    send_frame(engine, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}");
    for (long i = 0; i < h.sessions; i++) {
        snprintf(frame, sizeof frame,
                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"session/new\",\"params\":{\"cwd\":\"/tmp\",\"mcpServers\":[]}}", 100 + i);
        send_frame(engine, frame);
    }
    wait_until(&h, &h.created, h.sessions);
    pthread_mutex_lock(&h.lock);
    h.frames = 0;
    pthread_mutex_unlock(&h.lock);
    uint64_t start = now_ns();
    for (long i = 0; i < h.sessions; i++) {
        snprintf(frame, sizeof frame,
                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"%s\","
                 "\"prompt\":[{\"type\":\"text\",\"text\":\"go\"}]}}",
                 1000 + i, h.ids[i]);
        send_frame(engine, frame);
    }
    wait_until(&h, &h.answered, h.sessions);
    uint64_t elapsed = now_ns() - start;
    pthread_mutex_lock(&h.lock);
    long frames = h.frames;
    pthread_mutex_unlock(&h.lock);
    hearth_engine_free(engine);
    FILE *out = fopen(argv[4], "w");
    if (!out) die("cannot write %s", argv[4]);
    fprintf(out, "%ld %llu\n", frames, (unsigned long long)elapsed);
    fclose(out);
    return 0;
}
