#!/usr/bin/env bash
# Builds every distributable of Hearth, in release, into dist/ at the repository root:
#
#   scripts/package.sh [--platform <name>|all]
#
# <name>: a registry platform (linux-x86_64 linux-aarch64 darwin-x86_64 darwin-aarch64
# windows-x86_64 windows-aarch64); default this machine's. The host platform gets everything
# below; every platform gets
#
#   dist/archives/ hearth-<v>-<name>.tar.gz (.zip for Windows: hearth.exe) with LICENSE and a
#                  README, and <archive>.sha256 (sha256sum's format) beside it
#   dist/c-sdk/    hearth-c-<v>-<name>.tar.gz (.zip for Windows: the DLL and its import
#                  library), the C SDK of that platform (the host's is dist/c/ packed), .sha256
#
#   dist/npm/     hearth-acp-<v>.tgz and hearth-acp-<platform>-<v>.tgz (the addon and `hearth`)
#   dist/python/  hearth_acp-<v>-cp310-abi3-<manylinux tag>.whl (with `hearth`), hearth_acp-<v>.tar.gz
#   dist/jvm/     hearth-<v>.jar (libhearth_jni inside, under native/<platform>/), -sources.jar,
#                 -javadoc.jar, hearth-<v>.pom
#   dist/c/       include/hearth.h, lib/libhearth.{so,a}, lib/pkgconfig/hearth.pc, bin/hearth
#
# and ends with a table of every artifact and its size. One version for all: Cargo.toml's
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
mkdir -p "$dist"/{archives,c-sdk} "$stage"
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

# Platform $1 built by release_build_platform: its stdio archive and C SDK. The bindings'
# packages of another platform are not made here yet (see scripts/README.md).
package_platform() {
    local name="$1" triple out dir="$stage/c-$1" exe=hearth libs lib copies=()
    triple="$(platform_triple "$name")"
    out="$target/$triple/release"
    step "release build for $name ($triple)"
    if ! (release_build_platform "$name") >&2; then
        not_built+=("$name: everything (its release build failed; the log is above)")
        return
    fi
    case "$name" in
        darwin-*) libs=(libhearth.dylib libhearth.a) ;;
        windows-*) exe=hearth.exe libs=(hearth.dll libhearth.dll.a libhearth.a) ;;
        *) libs=(libhearth.so libhearth.a) ;;
    esac
    mkdir -p "$stage/$name"
    # llvm-strip reads every object format (Mach-O, PE, ELF of any arch); the host's strip
    # reads only its own. Same choices as the host's: see "stripped copies" in package_host.
    llvm-strip -o "$stage/$name/$exe" "$out/$exe"
    for lib in "${libs[@]}"; do
        case "$lib" in
            *.dll.a) cp "$out/$lib" "$stage/$name/$lib" ;;
            *.a) llvm-strip --strip-debug -o "$stage/$name/$lib" "$out/$lib" ;;
            *) llvm-strip --strip-unneeded -o "$stage/$name/$lib" "$out/$lib" ;;
        esac
        copies+=("$stage/$name/$lib")
    done
    c_sdk "$name" "$dir" "$stage/$name/$exe" "${copies[@]}"
    archive_c_sdk "$name" "$dir"
    archive_stdio "$name" "$stage/$name/$exe"
    not_built+=("$name: npm package, wheel, jar library (not packaged for a non-host platform yet)")
}

# Everything for this machine's platform: what CI's packages stage and package-check.sh use.
package_host() {
mkdir -p "$dist"/{npm,python,jvm}
step "release builds (shared with benches/build.sh)"
release_build_native
release_build_node_addon "$target/bench/node"
python="$(release_build_tools_python)"
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

step "dist/npm"
node "$repo/scripts/lib/npm-packages.mjs" "$stage/npm" "$napi" "$stage/hearth_node.$napi.node" "$stage/hearth"
for package in "$stage"/npm/*/; do
    (cd "$package" && npm pack --silent --pack-destination "$dist/npm" >/dev/null)
done

step "dist/python"
"$python" "$repo/scripts/lib/wheel-add-script.py" "$stage"/wheel/*.whl "$stage/hearth" "$dist/python" >/dev/null
"$(dirname "$python")/maturin" sdist -m "$repo/bindings/python/Cargo.toml" -o "$dist/python" >&2

step "dist/jvm"
jar_native="$stage/jar-native/native/$(jar_platform)"
mkdir -p "$jar_native"
cp "$stage/libhearth_jni.so" "$jar_native/"
(cd "$jar_native" && sha256sum libhearth_jni.so >libhearth_jni.so.sha256)
mvn -B -q --no-transfer-progress -Dstyle.color=never -f "$repo/bindings/jvm/pom.xml" -Pdist \
    -Dhearth.dist.native="$stage/jar-native" -DskipTests package 2>&1 | plain >&2
for suffix in "" -sources -javadoc; do
    cp "$repo/bindings/jvm/target/dist/hearth-$version$suffix.jar" "$dist/jvm/"
done
cp "$repo/bindings/jvm/pom.xml" "$dist/jvm/hearth-$version.pom"

step "dist/c"
c_sdk "$host" "$dist/c" "$stage/hearth" "$stage/libhearth.so" "$stage/libhearth.a"
archive_c_sdk "$host" "$dist/c"
archive_stdio "$host" "$stage/hearth"
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

rm -rf "$stage" # ~200 MB of copies; the disk is better spent elsewhere

echo
echo "dist/ (version $version, $host; built: ${platforms[*]}):"
(cd "$dist" && find . -type f ! -name '*.pom' ! -name '*.h' ! -name '*.pc' ! -name '*.sha256' -printf '%P\t%s\n' | sort) | size_table
for line in "${not_built[@]}"; do
    echo "not built: $line"
done
