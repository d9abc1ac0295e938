#!/usr/bin/env bash
# The round-trip latency harness: builds every host in release, times N sequential
# round trips of `initialize` and of `session/list` through each (C, Node, Python in-process;
# `hearth acp` over pipes) against a file store of 100 sessions, beside the list's query alone,
# prints the markdown table and (unless --quick) writes it to results.md. See README.md.
#
#   benches/roundtrip/run.sh [--requests N] [--quick] [--rounds R]
#
# --requests N  timed requests per host and method in all (default 100000)
# --quick       2000 requests: a smoke run for CI; results.md is left alone
# --rounds R    split each host's requests over R rounds that interleave the hosts (default 5)
#
# Environment: CARGO_TARGET_DIR, PYTHON (see ../build.sh); HEARTH_BENCH_BASE (see
# ../harness.sh: benches/compare.sh sets it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
command="benches/roundtrip/run.sh${*:+ $*}"

requests=100000
rounds=5
record=true # write results.md
warmup=1000 # untimed requests at the start of every driver process
sessions=100 # in the store: two pages of `session/list`

usage() { sed -n '7,14s/^# \{0,1\}//p' "$0"; } # the header comment above
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

hosts=({c,node,python,stdio}.{initialize,list} pingpong.initialize query.list)
add_base "$here/c_host.c" "$build/c_host_base" {c,stdio}@base.{initialize,list}

step "query driver (cargo build --release --example list_query -p hearth-core)"
(cd "$repo" && cargo build --release --locked -p hearth-core --example list_query)

# ---- the store ------------------------------------------------------------------------------

# One file store for every driver and both methods, so that the method is the only difference
# of a host's two columns (`initialize` never touches it). No request the drivers send changes it.
data="$work/data"
config="$work/config.json"
printf '{"dataDir":"%s","providers":{"openai":{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}' "$data" >"$config"
step "creating $sessions sessions (session/new through hearth acp)"
python3 "$here/prepare.py" "$sessions" "$target/release/hearth" "$config" >/dev/null

# ---- measure ----------------------------------------------------------------------------------

samples="$work/samples"
mkdir -p "$samples"

# Every driver takes: REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD (see bench.h); the query
# driver takes the data directory instead of the config and times its one query. A run is
# HOST.METHOD (`list` for `session/list`); each one's requests are split evenly over the rounds.
drive() {
    local host="${1%.*}" method="${1#*.}" round="$2" out="$samples/$1.$2.txt"
    local n=$((requests / rounds + (round < requests % rounds ? 1 : 0)))
    if [[ $method == list ]]; then method=session/list; fi
    local args=("$n" "$warmup" "$out" "$config" "$method")
    case "$host" in
        c) "$build/c_host" "${args[@]}" ;;
        node) NAPI_RS_NATIVE_LIBRARY_PATH="$addon" node "$here/node_host.mjs" "${args[@]}" ;;
        python) "$venv/bin/python" "$here/python_host.py" "${args[@]}" ;;
        stdio) "$build/stdio_host" "$target/release/hearth" "${args[@]}" ;;
        c@base) "$build/c_host_base" "${args[@]}" ;;
        stdio@base) "$build/stdio_host" "$base/hearth" "${args[@]}" ;;
        pingpong) "$build/pingpong" "${args[@]}" ;;
        query) "$target/release/examples/list_query" "$n" "$warmup" "$out" "$data" ;;
    esac
}

interleave "$rounds" "${hosts[@]}"

summary="$(python3 "$here/summarize.py" "$samples" "$warmup" "$sessions" "$command" ${base_rev:+"$base_rev"})"
echo "$summary"
if $record; then
    echo "$summary" >"$here/results.md"
fi
