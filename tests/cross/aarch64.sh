#!/usr/bin/env bash
# Linux aarch64: Hearth cross-built for aarch64-unknown-linux-gnu (Debian's cross gcc links it,
# see release_build_platform) and run under qemu-user against the host's mock LLM, through both
# ACP conformance suites. Installs what it needs when missing. Exits non-zero if the build or
# either suite fails.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"
source "$repo/scripts/lib/release-build.sh"
source "$repo/tests/cross/lib.sh"

ensure_apt qemu-user gcc-aarch64-linux-gnu libc6-arm64-cross libc6-dev-arm64-cross
bin="$(cross_build linux-aarch64)"
# -L: where qemu finds the aarch64 dynamic loader and libc (libc6-arm64-cross).
cross_conformance "$bin/hearth" "qemu-aarch64 -L /usr/aarch64-linux-gnu"
