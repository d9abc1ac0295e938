# The release builds every host-level harness measures (benches/roundtrip, benches/throughput).
# Sourced, not run: it sets the paths below for the caller.
#
#   source benches/build.sh
#
# Sets: repo, target, build (target/bench: C drivers and the release addon go here), addon (the
# release Node addon), venv (benches/.venv, with the release Python wheel installed), cflags and
# link_hearth (compiler flags of the C drivers, and those that link one to libhearth).
#
# Builds, all in release, without touching the debug builds the binding tests use (the commands
# are scripts/lib/release-build.sh's, which scripts/package.sh shares):
# - libhearth (cdylib), `hearth`, `hearth-mock-llm` (the throughput harness's data comes from it),
#   libhearth_jni (for the packages, built here so both callers run one identical cargo command)
#   and the Node addon, copied into $build/node under napi-rs's name (bindings/node keeps its
#   debug addon and its generated loader; drivers point napi-rs's loader at this one via
#   NAPI_RS_NATIVE_LIBRARY_PATH);
# - the Python wheel, into a temporary directory, installed into benches/.venv
#   (bindings/python/.venv and its `maturin develop` install are left alone).
# --locked everywhere: no harness rewrites Cargo.lock.
#
# benches/run.sh builds once for all harnesses and exports HEARTH_BENCH_BUILT=1, so that a
# harness sourcing this again only sets the paths.
#
# Environment: CARGO_TARGET_DIR (default: <repo>/target), PYTHON (creates the venv; python3).

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/common.sh" # sets repo, target
source "$repo/scripts/lib/release-build.sh"
build="$target/bench" # target/ is git-ignored
venv="$repo/benches/.venv" # release_build_tools_python creates it

build_step() { echo "build.sh: $*" >&2; }

build_all() {
    build_step "cargo build --release (libhearth, hearth, hearth-mock-llm, libhearth_jni)"
    release_build_native

    build_step "Node addon (the release cdylib, named as napi-rs loads it)"
    release_build_node_addon "$build/node"

    build_step "Python wheel (maturin build --release) into benches/.venv"
    local python wheels
    python="$(release_build_tools_python)"
    wheels="$(mktemp -d)"
    release_build_wheel "$python" "$wheels"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/*.whl
    rm -rf "$wheels"
}

if [[ -z "${HEARTH_BENCH_BUILT:-}" ]]; then
    mkdir -p "$build"
    build_all >&2 # stdout belongs to the harnesses' tables
fi
addon="$(echo "$build"/node/hearth_node.*.node)"
if [[ ! -e "$addon" || ! -x "$venv/bin/python" ]]; then
    echo "build.sh: the release builds are missing (HEARTH_BENCH_BUILT set before building?)" >&2
    exit 1
fi
cflags=(-std=c11 -O2 -Wall -Wextra -Wpedantic -Werror)
link_hearth=(-I"$repo/include" -L"$target/release" -lhearth -Wl,-rpath,"$target/release" -lpthread)
