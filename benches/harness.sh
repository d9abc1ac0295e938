# What every host-level harness's run.sh shares (benches/roundtrip, benches/throughput).
# Sourced, after the harness has parsed its arguments:
#
#   source "$here/../harness.sh"
#
# Gives: step MESSAGE (progress on stderr: stdout carries the table), work (a scratch directory
# removed on exit), the release builds and their paths (see build.sh), and interleave.

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
