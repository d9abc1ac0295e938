#!/usr/bin/env bash
# The round-trip latency harness: builds every host in release, times N sequential
# `initialize` round trips through each (C, Node, Python in-process; `hearth acp` over
# pipes), prints the markdown table and writes it to results.md. See README.md.
#
#   benches/roundtrip/run.sh [--requests N] [--quick] [--rounds R]
#
# --requests N  timed requests per host in all (default 100000)
# --quick       2000 requests: a smoke run for CI
# --rounds R    split each host's requests over R rounds that interleave the hosts (default 5)
#
# Environment: CARGO_TARGET_DIR (default: <repo>/target), PYTHON (creates the venv; python3).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
command="benches/roundtrip/run.sh${*:+ $*}"

requests=100000
rounds=5
warmup=1000 # untimed requests at the start of every driver process

usage() { sed -n '6,12s/^# \{0,1\}//p' "$0"; } # the header comment above
while [[ $# -gt 0 ]]; do
    case "$1" in
        --requests) requests="${2:?--requests needs a number}"; shift 2 ;;
        --quick) requests=2000; shift ;;
        --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
if ! [[ $requests =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] || ((rounds > requests)); then
    echo "run.sh: --requests and --rounds must be positive integers, rounds <= requests" >&2
    exit 2
fi

target="${CARGO_TARGET_DIR:-$repo/target}"
build="$target/roundtrip" # our binaries and the release addon; target/ is git-ignored
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
step() { echo "run.sh: $*" >&2; }

# ---- build, all in release ------------------------------------------------------------------

step "cargo build --release (libhearth, hearth)"
(cd "$repo" && cargo build --release --locked -p hearth-ffi -p hearth-cli)

step "C drivers (c_host, stdio_host, pingpong)"
mkdir -p "$build"
cflags=(-std=c11 -O2 -Wall -Wextra -Wpedantic -Werror)
cc "${cflags[@]}" -I"$repo/include" "$here/c_host.c" -o "$build/c_host" \
    -L"$target/release" -lhearth -Wl,-rpath,"$target/release" -lpthread
cc "${cflags[@]}" "$here/stdio_host.c" -o "$build/stdio_host"
cc "${cflags[@]}" "$here/pingpong.c" -o "$build/pingpong" -lpthread

# Into our own directory, without the JS loader (--no-js): bindings/node keeps its debug
# hearth_node.*.node, which its tests load; node_host.mjs is pointed at this one instead.
step "Node addon (napi build --release)"
if [[ ! -x "$repo/bindings/node/node_modules/.bin/napi" ]]; then
    (cd "$repo/bindings/node" && npm ci --no-audit --no-fund)
fi
(cd "$repo/bindings/node" && npx napi build --platform --release --no-js --output-dir "$build/node" -- --locked)
addon=("$build"/node/hearth_node.*.node)

# A release wheel installed into our own venv: bindings/python/.venv and its debug
# `maturin develop` install are left alone.
step "Python wheel (maturin build --release) into benches/roundtrip/.venv"
venv="$here/.venv"
[[ -x "$venv/bin/python" ]] || "${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/maturin" build --release --locked --quiet -i "$venv/bin/python" \
    -m "$repo/bindings/python/Cargo.toml" -o "$work/wheels"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$work"/wheels/*.whl

# ---- measure ----------------------------------------------------------------------------------

config="$work/config.json"
printf '%s' '{"dataDir":":memory:","providers":{"openai":{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}' >"$config"
samples="$work/samples"
mkdir -p "$samples"

# Every driver takes: REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE (see bench.h).
drive() {
    local host="$1" n="$2" out="$samples/$1.$3.txt"
    case "$host" in
        c) "$build/c_host" "$n" "$warmup" "$out" "$config" ;;
        node) NAPI_RS_NATIVE_LIBRARY_PATH="${addon[0]}" node "$here/node_host.mjs" "$n" "$warmup" "$out" "$config" ;;
        python) "$venv/bin/python" "$here/python_host.py" "$n" "$warmup" "$out" "$config" ;;
        stdio) "$build/stdio_host" "$target/release/hearth" "$n" "$warmup" "$out" "$config" ;;
        pingpong) "$build/pingpong" "$n" "$warmup" "$out" "$config" ;;
    esac
}

# The machine is shared, so its load drifts during a run. Rounds spread that drift over every
# host instead of letting it land on whichever host happened to run at a bad moment; the
# order rotates each round so that no host always follows the same one.
hosts=(c node python stdio pingpong)
for ((round = 0; round < rounds; round++)); do
    n=$((requests / rounds + (round < requests % rounds ? 1 : 0)))
    for ((i = 0; i < ${#hosts[@]}; i++)); do
        host="${hosts[(i + round) % ${#hosts[@]}]}"
        step "round $((round + 1))/$rounds: $host, $n requests"
        drive "$host" "$n" "$round"
    done
done

python3 "$here/summarize.py" "$samples" "$warmup" "$command" | tee "$here/results.md"
