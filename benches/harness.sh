# What every host-level harness's run.sh shares (benches/roundtrip, benches/throughput).
# Sourced, after the harness has parsed its arguments:
#
#   source "$here/../harness.sh"
#
# Gives: step MESSAGE (progress on stderr: stdout carries the table), work (a scratch directory
# removed on exit), the release builds and their paths (see build.sh), interleave, and the
# build to compare with, if any (base, base_rev, add_base).

step() { echo "${harness:-run.sh}: $*" >&2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

source "$(dirname "${BASH_SOURCE[0]}")/build.sh"

# interleave ROUNDS HOST...: calls `drive HOST ROUND` (a function the harness defines) for
# every host in every round, ROUND counting from 0. The machine is shared, so its load drifts
# during a run: rounds spread that drift over every host instead of letting it land on
# whichever host happened to run at a bad moment. The order rotates each round so that no
# host always follows the same one. Hosts never run at the same time.
interleave() {
    local rounds="$1" round i host
    shift
    local hosts=("$@")
    for ((round = 0; round < rounds; round++)); do
        for ((i = 0; i < ${#hosts[@]}; i++)); do
            host="${hosts[(i + round) % ${#hosts[@]}]}"
            step "round $((round + 1))/$rounds: $host"
            drive "$host" "$round"
        done
    done
}

# Another revision's build to measure beside this tree's, set by benches/compare.sh: a directory
# named after the revision, holding its `hearth`, `libhearth.so` and `replay_reference`. The
# harnesses then add a `HOST@base` run for each host those make (C, stdio, the reference),
# interleaved with the rest, and leave results.md alone. Unset: this tree only.
base="${HEARTH_BENCH_BASE:-}"
base_rev="${base:+$(basename "$base")}"

# add_base C_DRIVER OUTPUT RUN...: with a build to compare with, compiles C_DRIVER against its
# libhearth into OUTPUT, adds RUN... (`HOST@base.…` names) to the harness's `hosts` and sets
# `record=false`. Without one, does nothing.
add_base() {
    [[ -n $base ]] || return 0
    step "C driver for $base_rev's libhearth"
    cc "${cflags[@]}" "$1" -o "$2" -I"$repo/include" -L"$base" -lhearth -Wl,-rpath,"$base" -lpthread
    shift 2
    hosts+=("$@")
    record=false
}
