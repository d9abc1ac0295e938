#!/usr/bin/env bash
# Installs each artifact of dist/ (scripts/package.sh) the way a user would and runs a session
# with it against the scripted mock LLM:
#
#   scripts/package-check.sh
#
# - npm: `npm install --offline` of the main tarball and this platform's into an empty
#   project (the other platforms' optional packages are skipped); a session with the official
#   TS SDK over engine.stream(); another against `npx hearth acp` over stdio;
#   `npx hearth-acp acp --version`; the registry's spawn check on `npx hearth-acp acp`, timed
#   from a cold npx to the answered `initialize`;
# - wheel: `pip install --no-index` into a fresh venv; examples/python/ask.py (the official
#   Python SDK over hearth.aio), configured from the environment as its README says;
#   `hearth acp --version` from the venv's bin;
# - jar: examples/jetbrains compiled with `javac -cp hearth.jar` alone and run with no -D flag
#   (the jar extracts its library); two JVMs extracting into one empty cache at once; the error
#   a jar without this platform's library gives;
# - C SDK: examples/c/hello.c built with `pkg-config --cflags --libs hearth`; `bin/hearth acp --version`;
# - the shipped binaries carry no debug info (`file`).
#
# Everything runs in a fresh temporary directory, with no Rust toolchain on PATH, from a copy
# of dist/: nothing reads the build tree. The only downloads are the official SDKs, fetched
# before the checks go offline: the TS SDK (and zod, its peer) packed from bindings/node's
# node_modules, which `npm ci` filled from the lockfile; the Python SDK from PyPI into a local
# wheelhouse (python-requirements.txt). The mock LLM is copied in too: it stands for the
# model provider, not for anything a user installs.
#
# Ends with `N passed, N failed`; exits non-zero if any check failed.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
here="$repo/scripts/package-check"

version="$(workspace_version)"
[[ -d "$repo/dist/npm" ]] || die "no dist/: run scripts/package.sh first"
work="$(mktemp -d "${TMPDIR:-/tmp}/hearth-package-check.XXXXXX")"
cleanup() {
    [[ -n "${mock_pid:-}" ]] && stop_mock_llm
    rm -rf "$work"
}
trap cleanup EXIT

# ---- what the checks may use, gathered while the build tree and the network are still at hand
set -e
cp -r "$repo/dist" "$work/dist"
mkdir -p "$work/bin" "$work/vendor/npm" "$work/vendor/python" "$work/src"
cp "$target/release/hearth-mock-llm" "$work/bin/"
for sdk in @agentclientprotocol/sdk zod; do
    [[ -d "$repo/bindings/node/node_modules/$sdk" ]] || die "bindings/node/node_modules/$sdk is missing: run npm ci there"
    (cd "$repo/bindings/node/node_modules/$sdk" && npm pack --silent --pack-destination "$work/vendor/npm" >/dev/null)
done
"${PYTHON:-python3}" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    -d "$work/vendor/python" -r "$here/python-requirements.txt"
cp "$here"/node-host.mjs "$here"/python-requirements.txt "$repo/examples/python/ask.py" \
    "$repo/tests/registry/spawn-check.py" "$work/src/"
cp -r "$repo/examples/jetbrains/src" "$work/src/jetbrains"
cp "$repo/examples/c/hello.c" "$work/src/"
set +e

export PATH
PATH="$(path_without_rust)"
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
    die "a Rust toolchain is still on PATH ($(command -v cargo rustc | head -n1))"
fi
cd "$work"
mock_llm="$work/bin/hearth-mock-llm"
# Every session asks once; the mock answers each request with the next response.
node -e 'const r = { events: [{ text: "Hello" }, { text: " from the package" }] }
    console.log(JSON.stringify({ responses: Array(20).fill(r) }))' >"$work/script.json"
start_mock_llm "$work/script.json"
cat >"$work/config.json" <<EOF
{"dataDir": ":memory:", "providers": {"openai": {"baseUrl": "$mock_url", "apiKey": "test"}}}
EOF
answer="Hello from the package"

passed=()
failed=()
check() {
    local name="$1"
    shift
    echo
    echo "--- $name"
    local started=$SECONDS
    # Not in an `if`: bash ignores `set -e` inside a subshell whose status is being tested,
    # which would let a check pass on its last command alone.
    (set -euo pipefail; "$@")
    if (($? == 0)); then
        passed+=("$name ($((SECONDS - started)) s)")
    else
        failed+=("$name ($((SECONDS - started)) s)")
    fi
}
# Runs a host and requires the mock's answer and end_turn in what it printed (or, with
# --exit-says-end-turn, in its exit status).
expect_answer() {
    local stop="[end_turn]" out
    [[ "$1" == --exit-says-end-turn ]] && { stop=""; shift; }
    out="$("$@" 2>&1)" || { echo "$out"; echo "failed: $*" >&2; return 1; }
    echo "$out"
    [[ "$out" == *"$answer"* && "$out" == *"$stop"* ]] || { echo "no answer from: $*" >&2; return 1; }
}
expect_version() {
    local out
    out="$("$@")"
    echo "$out"
    [[ "$out" == *"$version"* ]] || { echo "$* did not print $version" >&2; return 1; }
}
no_debug_info() {
    local description
    description="$(file -L "$1")"
    echo "$description"
    [[ "$description" != *"with debug_info"* && "$description" == *", stripped"* ]]
}

check_npm() {
    mkdir -p npm-project && cd npm-project
    npm init -y >/dev/null
    cp "$work/src/node-host.mjs" .
    local started=$EPOCHREALTIME
    # --offline: hearth-acp's optional dependency on its platform package is satisfied by the
    # platform tarball installed alongside; nothing may come from a registry.
    npm install --offline --no-audit --no-fund --cache "$work/npm-cache" \
        "$work/dist/npm/hearth-acp-$version.tgz" "$work/dist/npm/hearth-acp-$(napi_platform)-$version.tgz" "$work"/vendor/npm/*.tgz
    expect_answer node node-host.mjs in-process "$work/config.json"
    echo "cold npm install to the first answered prompt: $(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $started }") s"
    expect_answer node node-host.mjs stdio "$work/config.json"
    expect_version npx --no hearth-acp acp --version
    # What an editor installing from the registry waits for: npx cold (empty HOME, so no npx
    # cache) to an answered `initialize`, under the registry's own spawn check. --prefix points
    # npx at this project's install, since the check runs the agent in the empty HOME.
    "${PYTHON:-python3}" "$work/src/spawn-check.py" \
        --cmd "npx --no --offline --no-update-notifier --prefix $PWD hearth-acp acp" |
        sed 's/^spawn-check: ok in/cold npx hearth-acp acp to an answered initialize:/'
    no_debug_info node_modules/hearth-acp-"$(napi_platform)"/hearth
    no_debug_info node_modules/hearth-acp-"$(napi_platform)"/hearth_node.*.node
}

check_wheel() {
    "${PYTHON:-python3}" -m venv venv
    venv/bin/pip install --quiet --disable-pip-version-check --no-index --find-links "$work/vendor/python" \
        -r "$work/src/python-requirements.txt"
    # dist/python may hold every platform's wheel: pip picks this one's.
    venv/bin/pip install --quiet --disable-pip-version-check --no-index --only-binary :all: \
        --find-links "$work/dist/python" hearth-acp
    # The console script is the binary itself, on the venv's PATH.
    (PATH="$work/venv/bin:$PATH" && expect_version hearth acp --version && no_debug_info "$(command -v hearth)")
    # ask.py exits non-zero unless the turn ended with end_turn.
    (cd "$work" && OPENAI_BASE_URL="$mock_url" OPENAI_API_KEY=test \
        expect_answer --exit-says-end-turn venv/bin/python src/ask.py "Say hello.")
}

check_jar() {
    local jar="$work/dist/jvm/hearth-$version.jar" main=dev.hearth.examples.jetbrains.Main
    mkdir -p jvm-classes
    javac -Xlint:all -Werror --release 17 -cp "$jar" -d jvm-classes $(find src/jetbrains -name '*.java')
    XDG_CACHE_HOME="$work/jvm-cache" expect_answer java -cp "$jar:jvm-classes" "$main" config.json "Say hello."
    # Two JVMs starting at once on an empty cache: both extract, neither loads a partial file.
    XDG_CACHE_HOME="$work/jvm-cache-2" java -cp "$jar:jvm-classes" "$main" config.json "Say hello." >jvm-1.out 2>&1 &
    local first=$!
    XDG_CACHE_HOME="$work/jvm-cache-2" java -cp "$jar:jvm-classes" "$main" config.json "Say hello." >jvm-2.out 2>&1
    local second=$?
    wait "$first" || { cat jvm-1.out; return 1; }
    [[ $second -eq 0 ]] || { cat jvm-2.out; return 1; }
    grep -q "$answer" jvm-1.out && grep -q "$answer" jvm-2.out
    find jvm-cache-2 -type f | tee jvm-cache.list
    [[ "$(wc -l <jvm-cache.list)" -eq 1 ]] || { echo "the cache holds more than the library" >&2; return 1; }
    # The jar without this platform's library (what it is on an unbuilt platform): the error
    # must name this one.
    python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as src, zipfile.ZipFile(sys.argv[2], "w") as dst:
    for item in src.infolist():
        if not item.filename.startswith("native/" + sys.argv[3] + "/"):
            dst.writestr(item, src.read(item.filename))' "$jar" other-platforms.jar "$(jar_platform)"
    if XDG_CACHE_HOME="$work/jvm-cache-3" java -cp "other-platforms.jar:jvm-classes" "$main" config.json "Say hello." >jvm-3.out 2>&1; then
        echo "a jar without this platform's library ran" >&2
        return 1
    fi
    grep "no native library for $(jar_platform)" jvm-3.out
}

check_c_sdk() {
    export PKG_CONFIG_PATH="$work/dist/c/lib/pkgconfig"
    expect_version pkg-config --modversion hearth
    # rpath: the SDK is unpacked anywhere, not installed into the loader's search path.
    cc -std=c11 -Wall -Wextra -Werror src/hello.c $(pkg-config --cflags --libs hearth) \
        -Wl,-rpath,"$(pkg-config --variable=libdir hearth)" -lpthread -o hello
    expect_answer ./hello "$(cat config.json)" "Say hello."
    expect_version dist/c/bin/hearth acp --version
    no_debug_info dist/c/bin/hearth
    no_debug_info dist/c/lib/libhearth.so
}

check "npm: hearth-acp + hearth-acp-$(napi_platform), TS SDK in-process and npx hearth acp" check_npm
check "wheel: pip install into a fresh venv, Python SDK over hearth.aio, hearth acp --version" check_wheel
check "jar: javac -cp the jar alone, run with no -D flags, two JVMs extracting at once" check_jar
check "C SDK: pkg-config build of examples/c/hello.c, bin/hearth" check_c_sdk

echo
for s in "${passed[@]}"; do echo "ok      $s"; done
for s in "${failed[@]}"; do echo "FAILED  $s"; done
echo "${#passed[@]} passed, ${#failed[@]} failed"
[[ ${#failed[@]} -eq 0 ]]
