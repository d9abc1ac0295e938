#!/usr/bin/env bash
# The frame-throughput harness: how many `session/update` frames per second reach a C, a Node
# and a Python host, and the engine's own Rust `Host` (the reference), during the replay of a
# `session/load`: live, and drained from a queue the engine has already filled. Builds
# everything in release, records one long session with the real engine against the mock LLM,
# replays it through each host in interleaved rounds, prints the markdown table. See README.md.
#
#   benches/throughput/run.sh [--events N] [--rounds R] [--quick]
#
# --events N  events in the recorded session (default 100000)
# --rounds R  runs per host, in rounds that interleave the hosts (default 5)
# --quick     4000 events, 3 rounds: a smoke run for CI; results.md is left alone
#
# A full run (without --quick) also writes the table to results.md.
# Environment: CARGO_TARGET_DIR, PYTHON (see ../build.sh); HEARTH_BENCH_BASE (see
# ../harness.sh: benches/compare.sh sets it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command="benches/throughput/run.sh${*:+ $*}"

events=100000
rounds=5
record=true # write results.md

usage() { sed -n '8,12s/^# \{0,1\}//p' "$0"; } # the header comment above
while [[ $# -gt 0 ]]; do
    case "$1" in
        --events) events="${2:?--events needs a number}"; shift 2 ;;
        --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
        --quick) events=4000 rounds=3 record=false; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
if ! [[ $events =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]]; then
    echo "run.sh: --events and --rounds must be positive integers" >&2
    exit 2
fi

# ---- build, all in release ------------------------------------------------------------------

# The scratch directory, step, interleave, and libhearth, hearth, hearth-mock-llm, the Node
# addon and the Python wheel: see ../harness.sh and ../build.sh.
harness=throughput
source "$here/../harness.sh"

step "C driver"
cc "${cflags[@]}" "$here/c_host.c" -o "$build/throughput_c_host" "${link_hearth[@]}"

step "reference driver (cargo build --release --example replay_reference -p hearth-ffi)"
(cd "$repo" && cargo build --release --locked -p hearth-ffi --example replay_reference)

hosts=({reference,c,node,python}.{live,drained})
add_base "$here/c_host.c" "$build/throughput_c_host_base" {reference,c}@base.{live,drained}

# ---- the session to replay ------------------------------------------------------------------

step "recording a session of ~$events events (hearth run against hearth-mock-llm)"
prepared="$(python3 "$here/prepare.py" "$events" "$target/release" "$work/data")"
read -r session stored <<<"$prepared"
step "session $session: $stored stored events to replay"

# ---- measure ----------------------------------------------------------------------------------

results="$work/results"
mkdir -p "$results"

# Drained runs: the first frame's callback pauses this long, about three times what the
# replay takes the engine here (~7 µs an event), so that the rest of it is queued when the
# host resumes. Were it too short, the drained figure would only come out lower.
pause_ms=$((events / 50 + 100))

# Every driver takes CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE (PAUSE_MS 0: a live run).
# Each run gets its own copy of the data directory: a load writes to the store (the session's
# state, the WAL), and every run must start from the same files.
drive() {
    local host="${1%.*}" mode="${1#*.}" out="$results/$1.$2.txt" data="$work/run"
    local pause=0
    if [[ $mode == drained ]]; then pause=$pause_ms; fi
    rm -rf "$data"
    cp -r "$work/data" "$data"
    local config="$work/run.json"
    printf '{"dataDir":"%s","providers":{"openai":{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}' "$data" >"$config"
    case "$host" in
        reference) "$target/release/examples/replay_reference" "$config" "$session" "$pause" "$out" ;;
        c) "$build/throughput_c_host" "$config" "$session" "$pause" "$out" ;;
        reference@base) "$base/replay_reference" "$config" "$session" "$pause" "$out" ;;
        c@base) "$build/throughput_c_host_base" "$config" "$session" "$pause" "$out" ;;
        node) NAPI_RS_NATIVE_LIBRARY_PATH="$addon" node "$here/node_host.mjs" "$config" "$session" "$pause" "$out" ;;
        python) "$venv/bin/python" "$here/python_host.py" "$config" "$session" "$pause" "$out" ;;
    esac
}

# Every host live (the engine replaying as the host takes frames) and drained.
interleave "$rounds" "${hosts[@]}"

summary="$(python3 "$here/summarize.py" "$results" "$stored" "$events" "$pause_ms" "$command" ${base_rev:+"$base_rev"})"
echo "$summary"
if $record; then
    echo "$summary" >"$here/results.md"
fi
