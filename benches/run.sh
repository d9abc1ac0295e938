#!/usr/bin/env bash
# The performance harness: every figure in one run, as markdown tables.
#
#   benches/run.sh [--quick]
#
# 1. in-process round trips per host vs `hearth acp` over pipes (benches/roundtrip);
# 2. `session/update` frames per second delivered to each host during a replay
#    (benches/throughput);
# 3. startup and memory (core/benches/startup.rs), after checking that the release `hearth`
#    follows cli/startup-order.txt;
# 4. engine overhead per streamed token, cancel latency and model steps of long sessions
#    (core/benches/turn.rs);
# 5. grep, glob and list on a tree of 100,000 files beside ripgrep (core/benches/search.rs).
# --quick runs each briefly, to prove the harness still works (CI); the numbers of a quick run
# mean little. Benchmarks never assert timings: the machines are shared and noisy.
# With HEARTH_BENCH_BASE (set by benches/compare.sh, see harness.sh), parts 1 and 2 also
# measure that other build, as does part 3's spawned `hearth acp` (its in-process figures are
# this tree's); the rest, which measure this tree's engine only, are skipped.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
quick=()
[[ "${1:-}" == "--quick" ]] && quick=(--quick)

# The release builds both host harnesses use, once (see benches/build.sh).
source benches/build.sh
export HEARTH_BENCH_BUILT=1

against="${HEARTH_BENCH_BASE:+ against $(basename "$HEARTH_BENCH_BASE")}"
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$against"
echo
echo "## Round trips"
bash benches/roundtrip/run.sh "${quick[@]}" | sed -n '/^| host/,/^$/p'
echo
echo "## Frame throughput"
bash benches/throughput/run.sh "${quick[@]}" | sed -n '/^| host/,/^$/p'
echo
echo "## Startup and memory"
# The release `hearth` packs start-up's functions together, or its RSS doubles (cli/build.rs).
python3 scripts/startup-order.py check
cargo bench -q -p hearth-core --bench startup -- "${quick[@]}"
[[ -z ${HEARTH_BENCH_BASE:-} ]] || exit 0
echo
echo "## Turns"
cargo bench -q -p hearth-core --bench turn -- "${quick[@]}"
echo
echo "## Search"
cargo bench -q -p hearth-core --bench search -- "${quick[@]}"
