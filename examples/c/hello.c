/*
 * hello.c — a tiny native host for Hearth: starts an engine, opens a session in the current
 * directory, sends one prompt and prints the agent's answer as it streams in.
 *
 *   hello [CONFIG_JSON [PROMPT]]
 *
 * CONFIG_JSON defaults to $HEARTH_CONFIG, then to "" (all defaults: OPENAI_API_KEY from the
 * environment, sessions under ~/.local/share/hearth). Build and run: see README.md.
 */
#define _POSIX_C_SOURCE 200809L

#include "hearth.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROMPT_ID 3

/* user_data: the answers to our three requests, filled in on the engine's delivery thread. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t answered;
    char *responses[PROMPT_ID + 1]; /* indexed by request id */
} conversation;

/* ---- just enough JSON for this host ---------------------------------------------------- */

static void put_utf8(char **out, unsigned long cp) {
    if (cp < 0x80) {
        *(*out)++ = (char)cp;
    } else if (cp < 0x800) {
        *(*out)++ = (char)(0xC0 | (cp >> 6));
        *(*out)++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *(*out)++ = (char)(0xE0 | (cp >> 12));
        *(*out)++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *(*out)++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *(*out)++ = (char)(0xF0 | (cp >> 18));
        *(*out)++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *(*out)++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *(*out)++ = (char)(0x80 | (cp & 0x3F));
    }
}

/* The value of the first string field `"key":"…"` in `json`, unescaped; NULL if absent.
 * The caller frees it. Enough for Hearth's compact frames, not a general JSON parser. */
static char *string_field(const char *json, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *in = strstr(json, pattern);
    if (!in) return NULL;
    in += strlen(pattern);
    char *value = malloc(strlen(in) + 1), *out = value; /* unescaping never grows the text */
    while (*in && *in != '"') {
        if (*in != '\\') {
            *out++ = *in++;
            continue;
        }
        in++;
        switch (*in) {
        case 'n': *out++ = '\n'; break;
        case 't': *out++ = '\t'; break;
        case 'r': *out++ = '\r'; break;
        case 'b': *out++ = '\b'; break;
        case 'f': *out++ = '\f'; break;
        case 'u': {
            unsigned long cp = strtoul((char[5]){in[1], in[2], in[3], in[4], 0}, NULL, 16);
            in += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && in[1] == '\\' && in[2] == 'u') { /* surrogate pair */
                unsigned long low = strtoul((char[5]){in[3], in[4], in[5], in[6], 0}, NULL, 16);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                in += 6;
            }
            put_utf8(&out, cp);
            break;
        }
        default: *out++ = *in; break; /* \" \\ \/ */
        }
        if (*in) in++;
    }
    *out = '\0';
    return value;
}

/* Writes `text` as a JSON string literal, quotes included. */
static void json_string(char *out, size_t cap, const char *text) {
    size_t n = 0;
    out[n++] = '"';
    for (; *text && n + 8 < cap; text++) {
        unsigned char c = (unsigned char)*text;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* ---- the callbacks ---------------------------------------------------------------------- */

static void on_frame(void *user_data, const char *frame, size_t len) {
    conversation *c = user_data;
    (void)len; /* the frame is also NUL-terminated */
    if (strstr(frame, "\"sessionUpdate\":\"agent_message_chunk\"")) {
        char *text = string_field(frame, "text");
        if (text) fputs(text, stdout);
        fflush(stdout);
        free(text);
        return;
    }
    int id = 0;
    if (sscanf(frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,", &id) == 1 && id > 0 && id <= PROMPT_ID) {
        pthread_mutex_lock(&c->lock);
        c->responses[id] = strdup(frame); /* the frame is only borrowed: keep a copy */
        pthread_cond_broadcast(&c->answered);
        pthread_mutex_unlock(&c->lock);
    }
}

/* Runs once, after the last on_frame, inside hearth_engine_free. */
static void free_conversation(void *user_data) {
    conversation *c = user_data;
    for (int i = 0; i <= PROMPT_ID; i++) free(c->responses[i]);
    pthread_cond_destroy(&c->answered);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Sends a request and waits for its response; returns it if it is a result, else NULL. */
static const char *call(hearth_engine *engine, conversation *c, int id, const char *method, const char *params) {
    char frame[8192];
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id, method, params);
    if (hearth_engine_send(engine, frame, strlen(frame)) != HEARTH_OK) {
        fprintf(stderr, "hello: %s: %s\n", method, hearth_last_error());
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    while (!c->responses[id]) pthread_cond_wait(&c->answered, &c->lock);
    const char *response = c->responses[id];
    pthread_mutex_unlock(&c->lock);
    if (strstr(response, "\"result\":")) return response;
    fprintf(stderr, "hello: %s failed: %s\n", method, response);
    return NULL;
}

static int converse(hearth_engine *engine, conversation *c, const char *prompt) {
    char cwd[4096], params[8192], text[4096];
    if (!getcwd(cwd, sizeof cwd)) return 1;
    json_string(text, sizeof text, cwd);
    snprintf(params, sizeof params, "{\"cwd\":%s,\"mcpServers\":[]}", text);
    const char *session;
    if (!call(engine, c, 1, "initialize", "{\"protocolVersion\":1}") || !(session = call(engine, c, 2, "session/new", params)))
        return 1;
    char *session_id = string_field(session, "sessionId");
    if (!session_id) return 1;
    json_string(text, sizeof text, prompt);
    snprintf(params, sizeof params, "{\"sessionId\":\"%s\",\"prompt\":[{\"type\":\"text\",\"text\":%s}]}", session_id, text);
    free(session_id);
    const char *answer = call(engine, c, PROMPT_ID, "session/prompt", params);
    if (!answer) return 1;
    char *stop_reason = string_field(answer, "stopReason");
    printf("\n");
    fprintf(stderr, "[%s]\n", stop_reason ? stop_reason : "?");
    free(stop_reason);
    return 0;
}

int main(int argc, char **argv) {
    const char *config = argc > 1 ? argv[1] : getenv("HEARTH_CONFIG");
    const char *prompt = argc > 2 ? argv[2] : "Say hello in five words.";
    if (!config) config = "";
    if (hearth_abi_version() != HEARTH_ABI_VERSION) {
        fprintf(stderr, "hello: built for ABI %d, but libhearth %s has ABI %u\n", HEARTH_ABI_VERSION,
                hearth_version(), (unsigned)hearth_abi_version());
        return 1;
    }

    conversation *c = calloc(1, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->answered, NULL);
    hearth_engine *engine = NULL;
    /* From here on the engine owns `c`, even if this fails. */
    if (hearth_engine_new(config, strlen(config), on_frame, c, free_conversation, &engine) != HEARTH_OK) {
        fprintf(stderr, "hello: %s\n", hearth_last_error());
        return 1;
    }
    int status = converse(engine, c, prompt);
    hearth_engine_free(engine);
    return status;
}
