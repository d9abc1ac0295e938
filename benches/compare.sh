#!/usr/bin/env bash
# Two builds side by side in one run: this working tree's engine and REV's. Builds REV's
# `hearth`, libhearth and throughput reference in a git worktree under target/compare, then
# runs the round-trip and throughput harnesses with REV's hosts interleaved with this tree's,
# so that both builds meet the same machine load (on a shared machine, runs at different
# times differ by more than many changes do).
#
#   benches/compare.sh REV [--quick]
#
# REV's rows are those its binary and libhearth make: C and stdio (round trips), the Rust
# reference and C (throughput); Node and Python are this tree's only. Their labels end in
# "— at REV". REV's engine must open the store this tree's writes (the same schema version).
# The startup part compares its spawned `hearth acp` (REV's binary taking turns with this
# tree's); its in-process figures, and the turn and search parts (this tree's engine only), are
# not compared. No results.md is written. Environment: CARGO_TARGET_DIR, PYTHON (see build.sh).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
usage="usage: benches/compare.sh REV [--quick]"
rev="$(git rev-parse --short --verify "${1:?$usage}^{commit}")"
shift
quick=()
case "${1:-}" in
    --quick) quick=(--quick) ;;
    "") ;;
    *) echo "$usage" >&2; exit 2 ;;
esac

# One worktree, checked out at each compared revision in turn, and one target directory for
# them all, so that a second comparison rebuilds only what changed. Both are under target/,
# which git ignores. REV's artifacts are copied into a directory of their own, named after it
# (the harnesses label its rows with that name).
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$repo/$target" # the build below runs in another directory
src="$target/compare/src"
base="$target/compare/$rev"
if [[ -e "$src/.git" ]]; then
    git -C "$src" checkout --quiet --detach "$rev"
else
    # --force: after `cargo clean` the worktree is gone but still registered.
    git worktree add --force --quiet --detach "$src" "$rev"
fi
echo "compare.sh: building $rev's hearth, libhearth and replay_reference (release) in $src" >&2
(
    cd "$src"
    export CARGO_TARGET_DIR="$target/compare/target"
    cargo build --release --locked -p hearth-ffi -p hearth-cli
    cargo build --release --locked -p hearth-ffi --example replay_reference
) >&2
mkdir -p "$base"
built="$target/compare/target/release"
cp "$built/hearth" "$built/libhearth.so" "$built/examples/replay_reference" "$base/"

# This tree's builds, the harnesses and the table: benches/run.sh, which with
# HEARTH_BENCH_BASE runs only the parts that measure both builds.
HEARTH_BENCH_BASE="$base" exec bash benches/run.sh "${quick[@]}"
