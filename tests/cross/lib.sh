# What the cross stages (aarch64.sh, windows.sh) share: the tools they install, the one build
# per target every check of a stage reuses, the conformance run against that build, and the
# time each step took. Sourced after scripts/lib/common.sh and scripts/lib/release-build.sh.
#
# HEARTH_CROSS_PROFILE: the cargo profile of the cross build (default `dev`, into
# target/<triple>/debug). dev is the default because CI's time is tight and the checks here are
# about behaviour, not speed; `release` builds what scripts/package.sh ships instead.

cross_profile="${HEARTH_CROSS_PROFILE:-dev}"

# Prints "cross: <what> took <n> s" after running the rest of the arguments, so each stage's
# cost reaches CI's log; returns the command's status.
timed() {
    local what="$1" start=$SECONDS status=0
    shift
    "$@" || status=$?
    echo "cross: $what took $((SECONDS - start)) s (status $status)"
    return "$status"
}

# Installs the Debian packages named that are missing (apt-get update only then): idempotent,
# and the versions are the Debian release's (CI's image pins the release).
ensure_apt() {
    local missing=() pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    ((${#missing[@]} == 0)) && return 0
    echo "cross: installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The Rust target of platform $1, added to the toolchain when missing.
ensure_rust_target() {
    local triple
    triple="$(platform_triple "$1")"
    rustup target list --installed | grep -qx "$triple" || rustup target add "$triple"
}

# The cross build of platform $1 (release_build_platform, in $cross_profile); prints the
# directory holding its binaries.
cross_build() {
    ensure_rust_target "$1"
    timed "build $1 ($cross_profile)" release_build_platform "$1" "$cross_profile" >&2 || return 1
    echo "$target/$(platform_triple "$1")/$(profile_dir "$cross_profile")"
}

# Both conformance suites against Hearth binary $1, started through the wrapper command $2
# (the mock LLM is the host's debug build, built here if missing).
cross_conformance() {
    (cd "$repo" && cargo build --locked -p hearth-mock-llm) || return 1
    HEARTH_BIN="$1" HEARTH_BIN_WRAPPER="$2" timed "conformance ($2)" bash "$repo/tests/conformance/run.sh"
}
