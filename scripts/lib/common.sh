# Shell helpers shared by the packaging scripts (scripts/package.sh, scripts/package-check.sh,
# scripts/check-versions.sh) and the release build (scripts/lib/release-build.sh). Sourced.
#
# Sets: repo (the repository root), target (cargo's target directory, absolute).

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
# Cargo resolves a relative CARGO_TARGET_DIR against the repository root; everyone here needs it absolute.
[[ "$target" == /* ]] || target="$repo/$target"

die() {
    echo "${0##*/}: $*" >&2
    exit 1
}

# The one version of every artifact: [workspace.package] version in the workspace Cargo.toml.
workspace_version() {
    awk '
        /^\[/ { section = $0 }
        section == "[workspace.package]" && $1 == "version" { gsub(/"/, "", $3); print $3; exit }
    ' "$repo/Cargo.toml"
}

# The platform names each ecosystem uses for this machine: napi-rs's (linux-x64-gnu), the
# jar's (linux-x86_64, see BundledLibrary.platform()).
napi_platform() {
    node -p 'const { platform, arch } = process; platform + "-" + arch +
        (platform === "linux" ? (process.report.getReport().header.glibcVersionRuntime ? "-gnu" : "-musl") : "")'
}
jar_platform() {
    local os arch
    case "$(uname -s)" in
        Linux) os=linux ;;
        Darwin) os=macos ;;
        *) os="$(uname -s | tr '[:upper:]' '[:lower:]')" ;;
    esac
    case "$(uname -m)" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
        *) arch="$(uname -m)" ;;
    esac
    echo "$os-$arch"
}

# This machine's registry platform name (linux-x86_64, darwin-aarch64, windows-x86_64, ...).
host_platform() {
    local os
    case "$(uname -s)" in
        Linux) os=linux ;;
        Darwin) os=darwin ;;
        MINGW* | MSYS* | CYGWIN*) os=windows ;;
        *) die "no registry platform for $(uname -s)" ;;
    esac
    echo "$os-$(jar_platform | cut -d- -f2)"
}

# PATH without any Rust toolchain: what a host that installs Hearth from a package has.
path_without_rust() {
    local entry kept=()
    local IFS=:
    for entry in $PATH; do
        case "$entry" in
            *.cargo/bin* | *rustup*) ;;
            *) kept+=("$entry") ;;
        esac
    done
    echo "${kept[*]}"
}

# Starts the scripted mock LLM (the binary $mock_llm, default: the release build) on a script
# file; sets mock_url. It serves until its stdin closes: stop_mock_llm closes it (and an exiting
# shell does too, so it never outlives us).
start_mock_llm() {
    local script="$1" fifo
    fifo="$(mktemp -u)"
    mkfifo "$fifo"
    "${mock_llm:-$target/release/hearth-mock-llm}" --script "$script" <"$fifo" >"$fifo.url" &
    mock_pid=$!
    exec {mock_stdin}>"$fifo"
    rm -f "$fifo"
    local waited=0
    until [[ -s "$fifo.url" ]]; do
        sleep 0.1
        ((++waited < 100)) || die "the mock LLM printed no URL in 10 s"
    done
    mock_url="$(head -n1 "$fifo.url")"
    rm -f "$fifo.url"
}
stop_mock_llm() {
    exec {mock_stdin}>&-
    wait "$mock_pid" || true
}

# Debian's Maven writes ANSI reset codes even in batch mode; a filter that keeps logs plain.
plain() { sed -u 's/\x1b\[[0-9;]*m//g'; }

# Prints "name<TAB>bytes" lines (stdin) as a table with human-readable sizes.
size_table() {
    awk -F'\t' '
        function human(b) { return b >= 1048576 ? sprintf("%.1f MB", b / 1048576) : sprintf("%.0f KB", b / 1024) }
        BEGIN { print "| artifact | size |"; print "|---|---:|" }
        { print "| " $1 " | " human($2) " |" }
    '
}
