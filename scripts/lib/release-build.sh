# The release builds, shared by the performance harness (benches/build.sh) and the packages
# (scripts/package.sh). Both must call these functions and nothing else: CI's package stage runs
# right after the performance stage on the same target/ directory, and only identical cargo,
# napi and maturin invocations (same packages, features, flags) find everything fresh there.
# Sourced after scripts/lib/common.sh (uses repo, target).
#
# --locked everywhere: no build rewrites Cargo.lock.

# libhearth (cdylib + staticlib), `hearth`, `hearth-mock-llm`, libhearth_jni and the Node addon
# (libhearth_node). One cargo
# invocation: the crates' features unify across the packages named, so splitting it (or naming
# a package more or less in one caller) would rebuild the shared dependencies.
release_build_native() {
    (cd "$repo" && cargo build --release --locked -p hearth-ffi -p hearth-cli -p hearth-mock-llm -p hearth-jvm -p hearth-node)
}

# The Node addon release_build_native built, into $1 under the name napi-rs's loader looks for
# (hearth_node.<platform>.node). Not `napi build`: it always passes `--target <host triple>`,
# which makes cargo compile hearth-core and every dependency a second time into
# target/<triple>/release. The addon is the same cdylib either way (napi-build's build script
# runs in both). bindings/node keeps its generated loader and its debug addon.
release_build_node_addon() {
    if [[ ! -d "$repo/bindings/node/node_modules" ]]; then
        (cd "$repo/bindings/node" && npm ci --no-audit --no-fund)
    fi
    local library
    case "$(uname -s)" in
        Darwin) library=libhearth_node.dylib ;;
        *) library=libhearth_node.so ;;
    esac
    mkdir -p "$1"
    cp "$target/release/$library" "$1/hearth_node.$(napi_platform).node"
}

# The Python wheel (abi3), built by the maturin of the venv whose python is $1, into $2.
release_build_wheel() {
    "$(dirname "$1")/maturin" build --release --locked --quiet -i "$1" -m "$repo/bindings/python/Cargo.toml" -o "$2"
}

# The venv whose maturin builds the release wheel (benches/.venv; maturin pinned in
# benches/requirements.txt). Prints its python.
release_build_tools_python() {
    local venv="$repo/benches/.venv"
    [[ -x "$venv/bin/python" ]] || "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$repo/benches/requirements.txt"
    echo "$venv/bin/python"
}

# The registry's platform names (agentclientprotocol/registry) and the Rust target of each.
# Every script that builds for another platform goes through these two functions, so the
# cross stages in CI and scripts/package.sh make the one same build per target.
platform_triple() {
    case "$1" in
        linux-x86_64) echo x86_64-unknown-linux-gnu ;;
        linux-aarch64) echo aarch64-unknown-linux-gnu ;;
        darwin-x86_64) echo x86_64-apple-darwin ;;
        darwin-aarch64) echo aarch64-apple-darwin ;;
        windows-x86_64) echo x86_64-pc-windows-gnu ;;
        windows-aarch64) echo aarch64-pc-windows-gnullvm ;;
        *) die "unknown platform '$1' (one of linux-x86_64 linux-aarch64 darwin-x86_64 darwin-aarch64 windows-x86_64 windows-aarch64)" ;;
    esac
}

# The same platform in napi-rs's names (its triple parser: os-arch, and the ABI where there
# are several) and in the jar's (BundledLibrary.platform(): os-arch with macos).
platform_napi() {
    case "$1" in
        linux-x86_64) echo linux-x64-gnu ;;
        linux-aarch64) echo linux-arm64-gnu ;;
        darwin-x86_64) echo darwin-x64 ;;
        darwin-aarch64) echo darwin-arm64 ;;
        windows-x86_64) echo win32-x64-gnu ;;
        windows-aarch64) echo win32-arm64-gnullvm ;;
        *) platform_triple "$1" ;;
    esac
}
platform_jar() {
    platform_triple "$1" >/dev/null
    sed 's/^darwin-/macos-/' <<<"$1"
}

# The release build of platform $1 into target/<triple>/release: the same packages as
# release_build_native, so one build serves the stdio archive, the C SDK, the jar and the npm
# addon of that platform. (Owner of the per-target details: the packages work of issue 19.)
# $2, the cargo profile (default release): the cross test stages (tests/cross/) pass `dev`,
# a build several minutes shorter whose one target/<triple>/debug serves all their checks.
release_build_platform() {
    local triple build=(build)
    triple="$(platform_triple "$1")"
    release_cross_setup "$1"
    [[ -z "$cross_zig" ]] || build=(zigbuild)
    (cd "$repo" && cargo "${build[@]}" --profile "${2:-release}" --locked --target "$triple" \
        -p hearth-ffi -p hearth-cli -p hearth-jvm -p hearth-node)
}

# The abi3 wheel of platform $1 into $3, by the maturin of the venv whose python is $2. A
# build of its own (maturin compiles the one crate it packs, with its own features), linked
# the way release_build_platform links that platform. No interpreter: an abi3 wheel needs none,
# and pyo3 links a Windows one against python3.dll by name (raw-dylib).
release_build_platform_wheel() {
    local triple zig=()
    triple="$(platform_triple "$1")"
    release_cross_setup "$1"
    if [[ "$1" == windows-* && -n "$cross_zig" ]]; then
        release_zig_linker "$triple"
    elif [[ -n "$cross_zig" ]]; then
        zig=(--zig)
    fi
    "$(dirname "$2")/maturin" build --release --locked --quiet --target "$triple" "${zig[@]}" \
        -m "$repo/bindings/python/Cargo.toml" -o "$3"
}

# zig as the C compiler, archiver and linker of target $1 (triple), through cargo-zigbuild's
# `zig cc`, which adapts rustc's linker arguments. For a Windows wheel in place of maturin's
# --zig: that one links with a .def file exporting `PyInit_<module-name>`, the dotted
# `PyInit_hearth._hearth` no object defines (maturin 1.16.0, src/compile.rs), and the link fails.
release_zig_linker() {
    local dir="$target/zig-linker/$1" env
    env="$(tr 'a-z-' 'A-Z_' <<<"$1")"
    mkdir -p "$dir"
    # zig names a Windows target <arch>-windows-gnu.
    printf '#!/bin/sh\nexec cargo-zigbuild zig cc -- -g -fno-sanitize=all -target %s "$@"\n' \
        "${1%%-*}-windows-gnu" >"$dir/cc"
    printf '#!/bin/sh\nexec cargo-zigbuild zig ar -- "$@"\n' >"$dir/ar"
    chmod +x "$dir/cc" "$dir/ar"
    export "CARGO_TARGET_${env}_LINKER=$dir/cc" "CC_${1//-/_}=$dir/cc" "AR_${1//-/_}=$dir/ar"
}

# Exports what building platform $1 on this machine needs; sets cross_zig when zig links it.
release_cross_setup() {
    local triple
    triple="$(platform_triple "$1")"
    cross_zig=
    case "$1" in
        # Debian's cross gcc (gcc-aarch64-linux-gnu) links; cc-rs finds it for ring and
        # SQLite by its triple-prefixed name already.
        linux-aarch64) export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="${CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER:-aarch64-linux-gnu-gcc}" ;;
        # zig links Mach-O (and compiles ring and SQLite for it); it ships libSystem but no
        # frameworks, so the Security and CoreFoundation link stubs (macos-stubs/) make the
        # Frameworks dir of an SDK of our own. SDKROOT names it: cargo-zigbuild puts its
        # Frameworks on the framework path, and rustc, which otherwise asks a missing `xcrun`
        # for the SDK and warns on every link, takes it as the SDK. Only Apple targets read
        # SDKROOT. A Mac has the real SDK.
        darwin-*)
            if [[ "$(uname -s)" != Darwin ]]; then
                release_build_zig_tools
                cross_zig=1
                local sdk="$target/macos-sdk/MacOSX.sdk"
                mkdir -p "$sdk/System/Library"
                ln -sfn "$repo/scripts/lib/macos-stubs" "$sdk/System/Library/Frameworks"
                export SDKROOT="$sdk"
            fi
            ;;
        # No mingw for arm64 in Debian: zig's llvm-mingw links.
        windows-aarch64) release_build_zig_tools; cross_zig=1 ;;
    esac
    [[ "$1" != windows-* ]] || release_libnode "$1"
}

# napi's build script links a Windows GNU addon with -lnode from $LIBNODE_PATH, and insists on
# a libnode.dll there; Node for Windows ships none (node.exe is an MSVC build exporting N-API
# itself). The addon imports nothing from it: on these targets bindings/node turns on napi's
# dyn-symbols, which looks N-API up in the loading process. So the library napi links is an
# import library of node.exe without exports (dlltool), under the names each linker looks for:
# libnode.dll.a (GNU ld), libnode.a (zig's lld); libnode.dll is one only napi-build reads.
release_libnode() {
    local dir="$target/libnode/$1" machine=i386:x86-64
    [[ "$1" == *aarch64 ]] && machine=arm64
    mkdir -p "$dir"
    printf 'LIBRARY node.exe\nEXPORTS\n' >"$dir/node.def"
    llvm-dlltool -m "$machine" -d "$dir/node.def" -l "$dir/libnode.dll.a"
    ln -sf libnode.dll.a "$dir/libnode.a"
    ln -sf libnode.dll.a "$dir/libnode.dll"
    export LIBNODE_PATH="$dir"
}

# cargo-zigbuild and zig (PyPI's ziglang, which cargo-zigbuild runs as `python3 -m ziglang`),
# pinned; installed once.
release_build_zig_tools() {
    command -v cargo-zigbuild >/dev/null || cargo install --locked cargo-zigbuild --version 0.24.1
    python3 -m ziglang version >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check ziglang==0.17.1
}

# The directory cargo puts profile $1's artifacts in: `dev` builds into debug/.
profile_dir() {
    if [[ "$1" == dev ]]; then echo debug; else echo "$1"; fi
}
