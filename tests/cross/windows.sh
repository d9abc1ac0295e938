#!/usr/bin/env bash
# Windows x86_64 under wine: Hearth's engine and CLI tests built for x86_64-pc-windows-gnu in
# one cargo invocation (the stage's one build; it makes hearth.exe too), then (a) the engine's
# integration suites run by wine (cargo's runner), minus the ones that need Unix-only servers,
# each skip printed with its reason; among them core/tests/windows_trees.rs, a command's tree
# (spawn-tree.exe) gone after session close, engine close and the engine's death (--no-engine-suites
# leaves (a) out; CI's time budget);
# (b) both ACP conformance suites against `wine hearth.exe acp`, whose command-cancel scenario
# is (c) the Windows process-tree check (tests/cross/spawn-tree.exe: a child and a grandchild,
# gone after the cancel); (d) the registry's spawn check on hearth.exe. Installs what it needs
# when missing. Exits non-zero if any part fails.
#   tests/cross/windows.sh [--no-engine-suites]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"
source "$repo/scripts/lib/release-build.sh"
source "$repo/tests/cross/lib.sh"

triple="$(platform_triple windows-x86_64)"

# Whole suites wine cannot run here, with the reason printed. The servers these start are the
# host's Linux programs; a Windows test process cannot start them as Windows processes.
declare -A skip_suites=(
    [mcp]="its MCP servers are tests/mcp/.venv's Linux Python, and it reads /proc for their pids"
    [credentials]="its MCP servers are the host's Linux Python"
    [lsp]="its language servers are the host's Linux programs"
    [lsp_processes]="its language server is a Linux program, found in /proc"
    [cancel]="its tree is POSIX sh and sleep found with pgrep; the Windows tree check is the conformance command-cancel (spawn-tree.exe)"
)
# Single tests, as `suite test` → reason (cargo's --skip, exact name).
declare -A skip_tests=(
    ["run mcp_config_servers_are_connected_for_the_run"]="its MCP server is tests/mcp/.venv's Linux Python"
    ["commands mcp_shows_the_servers_reconnects_them_and_their_prompts_are_commands"]="its MCP server is tests/mcp/.venv's Linux Python"
    ["commands a_first_prompt_runs_an_mcp_prompt_while_its_server_still_connects"]="its MCP server is tests/mcp/.venv's Linux Python"
    ["fork a_fork_connects_the_servers_its_request_names"]="its MCP server is tests/mcp/.venv's Linux Python"
    # A key left in wine's Credential Manager also makes stdio::no_credential_means_auth_required fail.
    ["auth a_stored_key_reaches_the_model_and_logout_removes_it"]="it tests the file fallback; Windows' Credential Manager always answers, and the key stored there outlives the test"
    ["auth a_key_the_host_passes_wins_over_the_stored_one"]="it stores a key in Windows' Credential Manager, user-wide, and never removes it (the file fallback it means to use is not reached on Windows)"
)

# A console-only prefix: wineboot creates it once (about 20 s), later runs reuse it. Its PATH
# leaves out WindowsPowerShell\v1.0: wine 8's powershell.exe is a stub that runs nothing and
# exits 0, and Hearth takes PowerShell when it is on PATH; without it Hearth runs cmd.exe,
# which wine implements.
wine_prefix() {
    export WINEDEBUG=-all WINEPREFIX="${WINEPREFIX:-$target/wine}"
    if [[ ! -f "$WINEPREFIX/system.reg" ]]; then
        timed "wine prefix" wineboot --init >/dev/null 2>&1
    fi
    # Rust's std needs bcryptprimitives.dll, which wine 8 lacks (tests/cross/bcryptprimitives.c).
    x86_64-w64-mingw32-gcc -O2 -Wall -shared -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
        "$repo/tests/cross/bcryptprimitives.c" -ladvapi32
    wine reg add 'HKLM\System\CurrentControlSet\Control\Session Manager\Environment' /v PATH \
        /t REG_EXPAND_SZ /d 'C:\windows\system32;C:\windows;C:\windows\system32\wbem' /f >/dev/null
    wineserver --wait
}

# The integration suites of hearth-core and hearth-cli (the test files named), built in
# $cross_profile by ONE cargo invocation — the one build of this stage: it also makes the
# hearth.exe the conformance suites drive, so hearth-core compiles once for Windows (a separate
# `cargo build` or a per-package `cargo test` resolves other features and compiles it again,
# about 5 minutes each here). With $1 = --build-only it only builds. Run by wine (cargo's
# runner); prints cargo's output, then "windows: engine suites: N passed, M failed".
engine_suites() {
    local mode="$1" suite args=() skips=() key log status=0
    shift
    for suite in "$@"; do
        if [[ -n "${skip_suites[$suite]:-}" ]]; then
            [[ $mode == --build-only ]] || echo "windows: skipped test suite $suite: ${skip_suites[$suite]}"
        else
            args+=(--test "$suite")
        fi
    done
    local cargo_test=(cargo test --locked --profile "$cross_profile" --target "$triple" -p hearth-core -p hearth-cli --no-fail-fast "${args[@]}")
    if [[ $mode == --build-only ]]; then
        (cd "$repo" && "${cargo_test[@]}" --no-run)
        return
    fi
    for key in "${!skip_tests[@]}"; do
        [[ " ${args[*]} " == *" --test ${key%% *} "* ]] || continue
        echo "windows: skipped test ${key/ /::}: ${skip_tests[$key]}"
        skips+=(--skip "${key#* }")
    done
    # Once: libtest refuses a repeated --exact, and runs none of a suite's tests then.
    ((${#skips[@]} == 0)) || skips+=(--exact)
    log="$(mktemp)"
    (cd "$repo" && CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine HEARTH_SPAWN_TREE="$spawn_tree" \
        "${cargo_test[@]}" -- "${skips[@]}") 2>&1 | tee "$log" || status=1
    awk '/^test result:/ { passed += $4; failed += $6 }
        END { printf "windows: engine suites: %d passed, %d failed\n", passed, failed }' "$log"
    rm -f "$log"
    return "$status"
}

# The names of the integration test files of crate directory $1.
suites_of() {
    local file
    for file in "$repo/$1"/tests/*.rs; do basename "$file" .rs; done
}

# (d) The ACP registry's spawn check (tests/registry/spawn-check.py) on hearth.exe under wine.
registry_spawn_check() {
    timed "registry spawn check" python3 "$repo/tests/registry/spawn-check.py" --cmd "wine $1 acp"
}

ensure_apt gcc-mingw-w64-x86-64 wine wine64
wine_prefix
ensure_rust_target windows-x86_64
# The process tree of the conformance command-cancel and of core/tests/windows_trees.rs.
spawn_tree="$target/cross/spawn-tree.exe"
mkdir -p "$(dirname "$spawn_tree")"
x86_64-w64-mingw32-gcc -O2 -Wall -o "$spawn_tree" "$repo/tests/cross/spawn-tree.c"
# shellcheck disable=SC2046 # one word per suite name
suites=($(suites_of core) $(suites_of cli))
if [[ ${1:-} == --no-engine-suites ]]; then
    # hearth.exe alone: the one build the checks below need.
    timed "build for windows-x86_64 ($cross_profile)" \
        bash -c "cd '$repo' && cargo build --locked --profile '$cross_profile' --target '$triple' -p hearth-cli"
else
    timed "build for windows-x86_64 ($cross_profile)" engine_suites --build-only "${suites[@]}"
fi
bin="$target/$triple/$(profile_dir "$cross_profile")"

status=0
if [[ ${1:-} == --no-engine-suites ]]; then
    echo "windows: skipped the engine suites under wine: --no-engine-suites (${HEARTH_WINE_SUITES_WHY:-asked})"
else
    timed "engine suites under wine" engine_suites --run "${suites[@]}" || status=1
fi
HEARTH_SPAWN_TREE="$spawn_tree" cross_conformance "$bin/hearth.exe" wine || status=1
registry_spawn_check "$bin/hearth.exe" || status=1
exit "$status"
