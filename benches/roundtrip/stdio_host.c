/*
 * stdio_host.c — the stdio driver: spawns `hearth acp --config CONFIG_FILE` the way an editor
 * spawns an ACP agent and does the same sequential round trips over its pipes: write one
 * line, read lines until the response line, repeat (see bench.h).
 *
 *   stdio_host HEARTH_BINARY REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD
 *
 * In C, with raw write(2)/read(2) and no stdio buffering, so that it adds as little as the
 * in-process C host does and the stdio/in-process ratio shows the cost of the pipes and the
 * second process, not of a slower driver.
 */
#include "bench.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    int to_agent;   /* the agent's stdin */
    int from_agent; /* the agent's stdout */
    char buf[1 << 16];
    size_t start, end; /* unread bytes are buf[start, end) */
} pipes;

static void write_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("stdio_host: cannot write to the agent: %s", strerror(errno));
        data += n, len -= (size_t)n;
    }
}

/* The next line from the agent, without its newline; *len gets its length. Valid until the
 * next call. */
static const char *read_line(pipes *p, size_t *len) {
    size_t scanned = p->start;
    for (;;) {
        char *nl = memchr(p->buf + scanned, '\n', p->end - scanned);
        if (nl) {
            const char *line = p->buf + p->start;
            *len = (size_t)(nl - line);
            p->start = (size_t)(nl - p->buf) + 1;
            return line;
        }
        if (p->start > 0) { /* make room: move the partial line to the front */
            memmove(p->buf, p->buf + p->start, p->end - p->start);
            p->end -= p->start, p->start = 0;
        }
        if (p->end == sizeof p->buf) die("stdio_host: a line longer than %zu bytes", sizeof p->buf);
        scanned = p->end;
        ssize_t n = read(p->from_agent, p->buf + p->end, sizeof p->buf - p->end);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("stdio_host: cannot read from the agent: %s", strerror(errno));
        if (n == 0) die("stdio_host: the agent closed its stdout (see its stderr above)");
        p->end += (size_t)n;
    }
}

static void round_trip(void *ctx, long id, const char *frame, size_t len) {
    pipes *p = ctx;
    /* One write for frame + newline, as a client's line writer would do: two writes would
     * cost an extra syscall and could wake the agent's reader twice. */
    char line[REQUEST_CAP + 1];
    memcpy(line, frame, len);
    line[len] = '\n';
    write_all(p->to_agent, line, len + 1);
    size_t got;
    const char *response = read_line(p, &got);
    if (response_id(response, got) != id) die("stdio_host: unexpected line: %.*s", (int)got, response);
}

int main(int argc, char **argv) {
    if (argc < 2) die("usage: %s HEARTH_BINARY REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD", argv[0]);
    const char *hearth = argv[1];
    argv[1] = argv[0];
    bench_args args = parse_args(argc - 1, argv + 1);

    int in[2], out[2]; /* the agent's stdin and stdout */
    if (pipe(in) != 0 || pipe(out) != 0) die("stdio_host: pipe: %s", strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    int ends[] = {in[0], in[1], out[0], out[1]};
    for (int i = 0; i < 4; i++) posix_spawn_file_actions_addclose(&actions, ends[i]);
    char *child_argv[] = {(char *)hearth, "acp", "--config", (char *)args.config_path, NULL};
    pid_t pid;
    int err = posix_spawn(&pid, hearth, &actions, NULL, child_argv, environ);
    if (err) die("stdio_host: cannot spawn %s: %s", hearth, strerror(err));
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);

    static pipes p; /* static: the 64 KiB buffer stays off the stack */
    p.to_agent = in[1];
    p.from_agent = out[0];
    measure(&args, round_trip, &p);

    /* EOF on stdin is how an editor ends the agent: it closes the engine and exits 0. */
    close(p.to_agent);
    int status;
    if (waitpid(pid, &status, 0) != pid) die("stdio_host: waitpid: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("stdio_host: the agent did not exit cleanly (status %d)", status);
    close(p.from_agent);
    return 0;
}
