#!/usr/bin/env bash
# Builds every distributable of Hearth, in release, into dist/ at the repository root:
#
#   scripts/package.sh [--platform <name>|all]
#
# <name>: a registry platform (linux-x86_64 linux-aarch64 darwin-x86_64 darwin-aarch64
# windows-x86_64 windows-aarch64); default this machine's. Every platform built gets
#
#   dist/archives/ hearth-<v>-<name>.tar.gz (.zip for Windows: hearth.exe) with LICENSE and a
#                  README, and <archive>.sha256 (sha256sum's format) beside it
#   dist/c-sdk/    hearth-c-<v>-<name>.tar.gz (.zip for Windows: the DLL and its import
#                  library), the C SDK of that platform (the host's is dist/c/ packed), .sha256
#   dist/npm/      hearth-acp-<napi platform>-<v>.tgz (the addon and `hearth`)
#   dist/python/   hearth_acp-<v>-cp310-abi3-<platform tag>.whl (with `hearth`)
#
# and all of them together make
#
#   dist/npm/     hearth-acp-<v>.tgz, its optionalDependencies naming every platform package
#   dist/jvm/     hearth-<v>.jar (every libhearth_jni under native/<os>-<arch>/), -sources.jar,
#                 -javadoc.jar, hearth-<v>.pom
#
# and the host alone: dist/python/hearth_acp-<v>.tar.gz (the sdist) and dist/c/ (include/hearth.h,
# lib/libhearth.{so,a}, lib/pkgconfig/hearth.pc, bin/hearth: what the C SDK archive packs).
#
# The run ends with a table of every artifact and its size. One version for all: Cargo.toml's
# [workspace.package] version (scripts/check-versions.sh runs first and fails on drift).
# Another platform is built by release_build_platform (target/<triple>/release, the build CI's
# cross stages share); what can't be built for it is listed with the reason after the table.
#
# The release builds are scripts/lib/release-build.sh's, the very commands the performance
# harness (benches/build.sh) runs, so after it everything here is fresh in cargo's eyes. The
# binaries in dist/ are stripped copies (target/release keeps its symbols for debugging).
#
# Environment: CARGO_TARGET_DIR, PYTHON (see benches/build.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$repo/scripts/lib/release-build.sh"

step() { echo "package.sh: $*" >&2; }

platforms=()
while (($#)); do
    case "$1" in
        --platform)
            [[ $# -ge 2 ]] || die "--platform needs a name or 'all'"
            if [[ "$2" == all ]]; then
                platforms=(linux-x86_64 linux-aarch64 darwin-x86_64 darwin-aarch64 windows-x86_64 windows-aarch64)
            else
                platform_triple "$2" >/dev/null
                platforms+=("$2")
            fi
            shift 2
            ;;
        *) die "unknown argument '$1' (usage: package.sh [--platform <name>|all])" ;;
    esac
done
host="$(host_platform)"
((${#platforms[@]})) || platforms=("$host")

bash "$repo/scripts/check-versions.sh"
version="$(workspace_version)"
napi="$(napi_platform)"
dist="$repo/dist"
stage="$target/package" # target/ is git-ignored; rebuilt from scratch every run
rm -rf "$dist" "$stage"
mkdir -p "$dist"/{archives,c-sdk,npm,python,jvm} "$stage"
python="$(release_build_tools_python)" # its maturin builds the wheels
not_built=() # "<platform>: <what> (<why>)" lines, printed after the table

# The C SDK of platform $1 in directory $2: the header, the libraries ($4...), `hearth` ($3)
# and a pkg-config file.
c_sdk() {
    local name="$1" sdk="$2" binary="$3"
    shift 3
    mkdir -p "$sdk"/{include,lib/pkgconfig,bin}
    cp "$repo/include/hearth.h" "$sdk/include/"
    cp "$@" "$sdk/lib/"
    cp "$binary" "$sdk/bin/"
    # ${pcfiledir}: the prefix is wherever the SDK was unpacked, so it can be moved freely.
    cat >"$sdk/lib/pkgconfig/hearth.pc" <<EOF
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: hearth
Description: Hearth, an embeddable Agent Client Protocol coding agent (C ABI)
URL: https://github.com/hearth-acp/hearth
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lhearth
Libs.private: $(static_link_libs "$name")
EOF
}

# What a static libhearth needs besides on platform $1 (rustc --print native-static-libs).
static_link_libs() {
    case "$1" in
        darwin-*) echo "-framework Security -framework CoreFoundation -liconv" ;;
        windows-*) echo "-lkernel32 -ladvapi32 -lntdll -luserenv -lws2_32 -lbcrypt -lcrypt32 -lsecur32" ;;
        *) echo "-lpthread -ldl -lm" ;;
    esac
}

# Packs directory $3's contents into dist/$1/$2.tar.gz (.zip for Windows, what its users
# unpack without extra tools), with a .sha256 beside it.
pack() {
    local into="$dist/$1" name="$2" dir="$3" file
    if [[ "$name" == *windows-* ]]; then
        file="$name.zip"
        (cd "$dir" && python3 -m zipfile -c "$into/$file" ./*)
    else
        file="$name.tar.gz"
        tar -C "$dir" -czf "$into/$file" .
    fi
    (cd "$into" && sha256sum "$file" >"$file.sha256")
}

# The stdio archive of platform $1: `hearth` ($2; hearth.exe on Windows), LICENSE, a README.
archive_stdio() {
    local dir="$stage/archive-$1" exe=hearth
    [[ "$1" == windows-* ]] && exe=hearth.exe
    mkdir -p "$dir"
    cp "$2" "$dir/$exe"
    cp "$repo/LICENSE" "$dir/"
    cat >"$dir/README.md" <<EOF
# Hearth $version ($1)

Hearth, an Agent Client Protocol coding agent. Editors spawn \`$exe acp\` and speak ACP over
its stdin/stdout; \`$exe run -p "..."\` runs one prompt in the terminal. \`$exe --help\` lists
the options; the configuration is described at https://github.com/hearth-acp/hearth.
EOF
    pack archives "hearth-$version-$1" "$dir"
}

# The C SDK archive of platform $1 from SDK directory $2.
archive_c_sdk() {
    pack c-sdk "hearth-c-$version-$1" "$2"
}

# The bindings of every platform are gathered while each is built and packaged once at the
# end: one npm main package naming all platform packages, one jar carrying all libraries.
npm_platforms=()
jar_native="$stage/jar-native"

# The npm platform package of platform $1 (napi-rs name) from the addon $2 and `hearth` $3.
add_npm_platform() {
    node "$repo/scripts/lib/npm-packages.mjs" platform "$stage/npm" "$1" "$2" "$3"
    npm_platforms+=("$1")
}

# JNI library $2 into the jar's native/<platform $1>/, with the hash the loader checks.
add_jar_library() {
    local dir="$jar_native/native/$1"
    mkdir -p "$dir"
    cp "$2" "$dir/"
    (cd "$dir" && sha256sum "${2##*/}" >"${2##*/}.sha256")
}

# The wheel maturin built into directory $1, into dist/python with `hearth` ($2) in its scripts.
add_wheel() {
    local wheel
    for wheel in "$1"/*.whl; do
        "$python" "$repo/scripts/lib/wheel-add-script.py" "$wheel" "$2" "$dist/python" >/dev/null
    done
}

# Platform $1 built by release_build_platform: from that one build its stdio archive, C SDK,
# npm platform package and jar library; its wheel is maturin's own build.
package_platform() {
    local name="$1" triple out dir="$stage/c-$1" exe=hearth lib_prefix=lib dylib=so libs lib copies=()
    triple="$(platform_triple "$name")"
    out="$target/$triple/release"
    step "release build for $name ($triple)"
    if ! (release_build_platform "$name") >&2; then
        not_built+=("$name: everything (its release build failed; the log is above)")
        return
    fi
    case "$name" in
        darwin-*) dylib=dylib libs=(libhearth.dylib libhearth.a) ;;
        windows-*) exe=hearth.exe lib_prefix='' dylib=dll libs=(hearth.dll libhearth.dll.a libhearth.a) ;;
        *) libs=(libhearth.so libhearth.a) ;;
    esac
    local own="$stage/$name"
    mkdir -p "$own"
    # llvm-strip reads every object format (Mach-O, PE, ELF of any arch); the host's strip
    # reads only its own. Same choices as the host's: see "stripped copies" in package_host.
    llvm-strip -o "$own/$exe" "$out/$exe"
    for lib in "${libs[@]}" "${lib_prefix}hearth_jni.$dylib" "${lib_prefix}hearth_node.$dylib"; do
        case "$lib" in
            *.dll.a) cp "$out/$lib" "$own/$lib" ;;
            # Debian's llvm-strip 14 rejects some members zig writes into an arm64 Windows
            # static library ("unsupported object file format"): that one ships unstripped.
            *.a) llvm-strip --strip-debug -o "$own/$lib" "$out/$lib" 2>/dev/null || cp "$out/$lib" "$own/$lib" ;;
            # llvm-objcopy has no --strip-unneeded for Mach-O; -x drops the local symbols and
            # keeps the global ones (a dylib's exports live in dyld's export trie regardless).
            *.dylib) llvm-strip -x -o "$own/$lib" "$out/$lib" ;;
            *) llvm-strip --strip-unneeded -o "$own/$lib" "$out/$lib" ;;
        esac
    done
    for lib in "${libs[@]}"; do copies+=("$own/$lib"); done
    c_sdk "$name" "$dir" "$own/$exe" "${copies[@]}"
    archive_c_sdk "$name" "$dir"
    archive_stdio "$name" "$own/$exe"

    local napi_name
    napi_name="$(platform_napi "$name")"
    cp "$own/${lib_prefix}hearth_node.$dylib" "$own/hearth_node.$napi_name.node"
    add_npm_platform "$napi_name" "$own/hearth_node.$napi_name.node" "$own/$exe"
    add_jar_library "$(platform_jar "$name")" "$own/${lib_prefix}hearth_jni.$dylib"

    step "wheel for $name ($triple)"
    if (release_build_platform_wheel "$name" "$python" "$own/wheel") >&2; then
        add_wheel "$own/wheel" "$own/$exe"
    else
        not_built+=("$name: wheel (maturin failed; the log is above)")
    fi
}

# Everything for this machine's platform: what CI's packages stage and package-check.sh use.
package_host() {
    step "release builds (shared with benches/build.sh)"
    release_build_native
    release_build_node_addon "$target/bench/node"
    release_build_wheel "$python" "$stage/wheel"

    step "stripped copies of the binaries"
    # --strip-unneeded keeps the dynamic symbol tables that loaders (dlopen, N-API, JNI) use; the
    # executable needs none.
    strip -o "$stage/hearth" "$target/release/hearth"
    strip --strip-unneeded -o "$stage/hearth_node.$napi.node" "$target/bench/node/hearth_node.$napi.node"
    strip --strip-unneeded -o "$stage/libhearth.so" "$target/release/libhearth.so"
    strip --strip-unneeded -o "$stage/libhearth_jni.so" "$target/release/libhearth_jni.so"
    # Debug sections only: a static library's symbols are what its users link against.
    strip --strip-debug -o "$stage/libhearth.a" "$target/release/libhearth.a"

    add_npm_platform "$napi" "$stage/hearth_node.$napi.node" "$stage/hearth"
    add_wheel "$stage/wheel" "$stage/hearth"
    "$(dirname "$python")/maturin" sdist -m "$repo/bindings/python/Cargo.toml" -o "$dist/python" >&2
    add_jar_library "$(jar_platform)" "$stage/libhearth_jni.so"

    step "dist/c"
    c_sdk "$host" "$dist/c" "$stage/hearth" "$stage/libhearth.so" "$stage/libhearth.a"
    archive_c_sdk "$host" "$dist/c"
    archive_stdio "$host" "$stage/hearth"
}

# dist/npm: every platform package built and the main package naming them all.
finish_npm() {
    ((${#npm_platforms[@]})) || return 0
    step "dist/npm (${npm_platforms[*]})"
    node "$repo/scripts/lib/npm-packages.mjs" main "$stage/npm" "${npm_platforms[@]}"
    for package in "$stage"/npm/*/; do
        (cd "$package" && npm pack --silent --pack-destination "$dist/npm" >/dev/null)
    done
}

# dist/jvm: one jar with every platform's library under native/<os>-<arch>/.
finish_jar() {
    [[ -d "$jar_native/native" ]] || return 0
    step "dist/jvm ($(ls "$jar_native/native" | tr '\n' ' '))"
    # The profile's output dir is not cleaned by `package`: natives of an earlier run with
    # other platforms would ride along into this jar.
    rm -rf "$repo/bindings/jvm/target/dist"
    mvn -B -q --no-transfer-progress -Dstyle.color=never -f "$repo/bindings/jvm/pom.xml" -Pdist \
        -Dhearth.dist.native="$jar_native" -DskipTests package 2>&1 | plain >&2
    for suffix in "" -sources -javadoc; do
        cp "$repo/bindings/jvm/target/dist/hearth-$version$suffix.jar" "$dist/jvm/"
    done
    cp "$repo/bindings/jvm/pom.xml" "$dist/jvm/hearth-$version.pom"
}

for platform in "${platforms[@]}"; do
    # package_host is Linux's (.so names, GNU strip); a macOS or Windows runner packages its
    # own platform the way any other platform is.
    if [[ "$platform" == "$host" && "$host" == linux-* ]]; then
        package_host
    else
        package_platform "$platform"
    fi
done
finish_npm
finish_jar

rm -rf "$stage" # ~200 MB of copies; the disk is better spent elsewhere

echo
echo "dist/ (version $version, $host; built: ${platforms[*]}):"
(cd "$dist" && find . -type f ! -name '*.pom' ! -name '*.h' ! -name '*.pc' ! -name '*.sha256' -printf '%P\t%s\n' | sort) | size_table
for line in "${not_built[@]}"; do
    echo "not built: $line"
done
