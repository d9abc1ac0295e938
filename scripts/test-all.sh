#!/usr/bin/env bash
# Every test of Hearth, on a fresh machine: installs what is missing (apt packages, npm and
# PyPI dependencies, Maven artifacts), builds the workspace once in debug, then runs each
# suite against that one target directory. Every stage runs even if an earlier one failed;
# the script exits non-zero if any failed, and ends with a table of the stages.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
export CARGO_TERM_COLOR=never
# On CI, where every build starts cold, incremental caches only cost disk (1.7 GB of target/).
[[ ${CI:-} == true ]] && export CARGO_INCREMENTAL=0

failed=()
passed=()

stage() {
  local name="$1"
  shift
  echo
  echo "=================== $name ==================="
  local started=$SECONDS
  if "$@"; then
    passed+=("$name ($((SECONDS - started)) s)")
  else
    failed+=("$name ($((SECONDS - started)) s)")
  fi
  echo "== $name: $((SECONDS - started)) s; disk free: $(df -h --output=avail . | tail -1 | xargs)"
}

# CI's disk is bounded (one run ran out of space in the performance stage's release build with
# every earlier build still in target/): on CI, a build no later stage uses is deleted.
drop_on_ci() {
  [[ ${CI:-} == true ]] || return 0
  echo "== CI: deleting $* (no later stage uses them)"
  rm -rf "$@"
}

# Debian packages the suites need beyond the machine's toolchains.
install_system_packages() {
  local missing=()
  command -v valgrind >/dev/null || missing+=(valgrind)
  command -v cc >/dev/null || missing+=(build-essential)
  command -v mvn >/dev/null || missing+=(maven)
  # The packages stage: pkg-config builds the C SDK's host, file checks the binaries are stripped.
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  command -v file >/dev/null || missing+=(file)
  # The sandbox suites: the bwrap layer (core/tests/sandbox*.rs run under it, then again
  # without it) and curl through the allowlist proxy.
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v curl >/dev/null || missing+=(curl)
  # The performance stage: ripgrep is the reference of the search bench.
  command -v rg >/dev/null || missing+=(ripgrep)
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing packages: ${missing[*]} (run as root or install them)" >&2
    return 1
  fi
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

# Builds dist/ from the release build the performance stage just made (the same commands, see
# scripts/lib/release-build.sh, so nothing is rebuilt), then installs each artifact as a user would.
packages() {
  bash scripts/package.sh && bash scripts/package-check.sh && registry_of_the_packages
}

# The registry entry of the archives just built, and the registry's spawn check on the packaged
# `hearth` as a user unpacks it (the archive, not target/).
registry_of_the_packages() {
  local unpacked archive
  bash scripts/registry.sh || return 1
  unpacked="$(mktemp -d)"
  archive="$(ls dist/archives/hearth-*-linux-x86_64.tar.gz)" || return 1
  tar -xzf "$archive" -C "$unpacked" &&
    python3 tests/registry/spawn-check.py --cmd "$(find "$unpacked" -name hearth -type f) acp"
  local status=$?
  rm -rf "$unpacked"
  return "$status"
}

rust_checks() {
  cargo fmt --all -- --check && cargo clippy --workspace --all-targets -- -D warnings
}

stage "system packages" install_system_packages
# The real MCP servers the MCP tests connect to (official Python SDK, server-everything).
stage "MCP test servers" bash tests/mcp/setup.sh
# The real language servers the LSP tests start (pyright, TypeScript 7), pinned, from npm.
stage "LSP test servers" bash tests/lsp/setup.sh
stage "cargo build" cargo build --workspace --all-targets
stage "cargo fmt + clippy" rust_checks
# A kernel without Landlock fails the sandbox suite here instead of skipping it.
# The sandbox suites run under the bwrap layer there (bwrap is installed, and required);
# the next stage runs them again with Landlock alone.
stage "cargo test" env HEARTH_REQUIRE_SANDBOX=1 cargo test --workspace --no-fail-fast
stage "sandbox suites, Landlock layer (no bwrap)" env HEARTH_REQUIRE_SANDBOX=1 HEARTH_TEST_BWRAP=off cargo test -p hearth-core --test sandbox --test sandbox_network
stage "conformance (official TS + Python SDKs)" bash tests/conformance/run.sh
stage "registry entry (scripts/registry.sh) + the registry's spawn check" bash tests/registry/run.sh
# Other platforms, each from one debug cross build reused by all its checks (tests/cross/):
# Windows under wine (conformance with the process-tree check, the registry's spawn check; the
# engine suites under wine, `tests/cross/windows.sh` without the flag, cost ~8 more minutes of
# build and CI's 60-minute budget has no room for them yet: run them by hand), Linux aarch64
# under qemu (conformance). macOS cannot run here: it is built and
# linked by hand (scripts/package.sh --platform darwin-*) and tested by .github/workflows/release.yml.
stage "Windows x86_64 under wine (conformance, process trees, registry check)" env HEARTH_WINE_SUITES_WHY="CI's 60-minute budget; tests/cross/windows.sh runs them" bash tests/cross/windows.sh --no-engine-suites
drop_on_ci target/x86_64-pc-windows-gnu
stage "Linux aarch64 under qemu (conformance)" bash tests/cross/aarch64.sh
drop_on_ci target/aarch64-unknown-linux-gnu
stage "C ABI (shared, static, valgrind)" bash tests/c/run.sh
stage "Node binding" bash bindings/node/run-tests.sh
stage "VS Code extension example (tsc against @types/vscode, node:test)" bash examples/vscode/run-tests.sh
stage "Python binding" bash bindings/python/run-tests.sh
stage "JVM binding" bash bindings/jvm/run-tests.sh
stage "reliability (bounded fuzzing, FFI misuse under sanitizers)" bash scripts/reliability-ci.sh
# The debug, napi --platform, sanitizer and fuzz builds; what follows builds in release.
drop_on_ci target/debug "target/$(rustc -vV | sed -n 's/^host: //p')" target/asan-ffi fuzz/target
stage "performance harness (quick mode: proves it runs; numbers mean little)" bash benches/run.sh --quick
stage "packages (build dist/, install each as a user)" packages

echo
echo "=================== summary ==================="
for s in "${passed[@]}"; do echo "ok      $s"; done
for s in "${failed[@]}"; do echo "FAILED  $s"; done
echo "${#passed[@]} passed, ${#failed[@]} failed"
[[ ${#failed[@]} -eq 0 ]]
