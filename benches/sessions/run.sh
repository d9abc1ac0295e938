#!/usr/bin/env bash
# Many sessions streaming at once into one in-process host (issue 23, item 7): C and Node.
# Builds in release, then per run starts the scripted mock LLM and one engine on a fresh file
# store, opens SESSIONS sessions, sends every one its prompt at once and times the first
# prompt → the last answer, counting the frames; each driver checks that every session's
# chunks arrive complete and in order and that each prompt is answered once, after them.
# Prints the markdown table (frames/s); see README.md.
#
#   benches/sessions/run.sh [--sessions N] [--words W] [--rounds R] [--quick]
#
# --sessions N  sessions streaming at once (default 100)
# --words W     words each session's answer streams, 1 ms apart (default 200)
# --rounds R    runs per host, in rounds that interleave the hosts (default 5)
# --quick       2 rounds of 50 words: a smoke run for CI
#
# Environment: CARGO_TARGET_DIR, PYTHON (see ../build.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command="benches/sessions/run.sh${*:+ $*}"

sessions=100
words=200
rounds=5

usage() { sed -n '9,14s/^# \{0,1\}//p' "$0"; } # the header comment above
while [[ $# -gt 0 ]]; do
    case "$1" in
        --sessions) sessions="${2:?--sessions needs a number}"; shift 2 ;;
        --words) words="${2:?--words needs a number}"; shift 2 ;;
        --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
        --quick) words=50 rounds=2; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
if ! [[ $sessions =~ ^[1-9][0-9]*$ && $words =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]]; then
    echo "run.sh: --sessions, --words and --rounds must be positive integers" >&2
    exit 2
fi

# The scratch directory, step, interleave, and the release builds: see ../harness.sh, ../build.sh.
harness=sessions
source "$here/../harness.sh"

step "C driver"
cc "${cflags[@]}" "$here/c_host.c" -o "$build/sessions_c_host" "${link_hearth[@]}"

# One answer per session, the same numbered words for each: `w0 `, `w1 `, …, each flushed and
# followed by a 1 ms pause, as a model streams tokens over time. Without the pauses the engine
# would merge each session's deltas (already waiting) into a few chunks.
python3 - "$sessions" "$words" >"$work/script.json" <<'PY'
import json, sys
sessions, words = int(sys.argv[1]), int(sys.argv[2])
answer = {"events": [event for i in range(words) for event in ({"text": f"w{i} "}, {"stallMs": 1})]}
json.dump({"responses": [answer] * sessions}, sys.stdout)
PY

results="$work/results"
mkdir -p "$results"

# Each run: its own mock (it serves its responses in turn) and its own fresh file store.
drive() {
    local host="$1" out="$results/$1.$2.txt" data="$work/data"
    rm -rf "$data"
    coproc MOCK { exec "$target/release/hearth-mock-llm" --script "$work/script.json"; }
    local mock_pid=$MOCK_PID url
    read -r url <&"${MOCK[0]}"
    printf '{"dataDir":"%s","model":"mock-model","providers":{"openai":{"baseUrl":"%s","apiKey":"bench"}}}' \
        "$data" "$url" >"$work/config.json"
    local args=("$work/config.json" "$sessions" "$words" "$out")
    case "$host" in
        c) "$build/sessions_c_host" "${args[@]}" ;;
        node) NAPI_RS_NATIVE_LIBRARY_PATH="$addon" node "$here/node_host.mjs" "${args[@]}" ;;
    esac
    local mock_stdin=${MOCK[1]}
    exec {mock_stdin}>&- # the mock serves until its stdin closes
    wait "$mock_pid"
}

interleave "$rounds" c node

python3 "$here/summarize.py" "$results" "$sessions" "$words" "$command"
