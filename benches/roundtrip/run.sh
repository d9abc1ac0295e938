#!/usr/bin/env bash
# The round-trip latency harness: builds every host in release, times N sequential
# `initialize` round trips through each (C, Node, Python in-process; `hearth acp` over
# pipes), prints the markdown table and (unless --quick) writes it to results.md. See README.md.
#
#   benches/roundtrip/run.sh [--requests N] [--quick] [--rounds R]
#
# --requests N  timed requests per host in all (default 100000)
# --quick       2000 requests: a smoke run for CI; results.md is left alone
# --rounds R    split each host's requests over R rounds that interleave the hosts (default 5)
#
# Environment: CARGO_TARGET_DIR, PYTHON (see ../build.sh).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
command="benches/roundtrip/run.sh${*:+ $*}"

requests=100000
rounds=5
record=true # write results.md
warmup=1000 # untimed requests at the start of every driver process

usage() { sed -n '6,12s/^# \{0,1\}//p' "$0"; } # the header comment above
while [[ $# -gt 0 ]]; do
    case "$1" in
        --requests) requests="${2:?--requests needs a number}"; shift 2 ;;
        --quick) requests=2000 record=false; shift ;;
        --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
if ! [[ $requests =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] || ((rounds > requests)); then
    echo "run.sh: --requests and --rounds must be positive integers, rounds <= requests" >&2
    exit 2
fi

# ---- build, all in release ------------------------------------------------------------------

# The scratch directory, step, interleave, and libhearth, hearth, the Node addon and the Python
# wheel: see ../harness.sh and ../build.sh.
harness=roundtrip
source "$here/../harness.sh"

step "C drivers (c_host, stdio_host, pingpong)"
cc "${cflags[@]}" "$here/c_host.c" -o "$build/c_host" "${link_hearth[@]}"
cc "${cflags[@]}" "$here/stdio_host.c" -o "$build/stdio_host"
cc "${cflags[@]}" "$here/pingpong.c" -o "$build/pingpong" -lpthread

# ---- measure ----------------------------------------------------------------------------------

config="$work/config.json"
printf '%s' '{"dataDir":":memory:","providers":{"openai":{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}' >"$config"
samples="$work/samples"
mkdir -p "$samples"

# Every driver takes: REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE (see bench.h). Each host's
# requests are split evenly over the rounds.
drive() {
    local host="$1" round="$2" out="$samples/$1.$2.txt"
    local n=$((requests / rounds + (round < requests % rounds ? 1 : 0)))
    case "$host" in
        c) "$build/c_host" "$n" "$warmup" "$out" "$config" ;;
        node) NAPI_RS_NATIVE_LIBRARY_PATH="$addon" node "$here/node_host.mjs" "$n" "$warmup" "$out" "$config" ;;
        python) "$venv/bin/python" "$here/python_host.py" "$n" "$warmup" "$out" "$config" ;;
        stdio) "$build/stdio_host" "$target/release/hearth" "$n" "$warmup" "$out" "$config" ;;
        pingpong) "$build/pingpong" "$n" "$warmup" "$out" "$config" ;;
    esac
}

interleave "$rounds" c node python stdio pingpong

summary="$(python3 "$here/summarize.py" "$samples" "$warmup" "$command")"
echo "$summary"
if $record; then
    echo "$summary" >"$here/results.md"
fi
