#!/usr/bin/env bash
# Builds every distributable of Hearth, in release, into dist/ at the repository root:
#
#   scripts/package.sh
#
#   dist/npm/     hearth-acp-<v>.tgz and hearth-acp-<platform>-<v>.tgz (the addon and `hearth`)
#   dist/python/  hearth_acp-<v>-cp310-abi3-<manylinux tag>.whl (with `hearth`), hearth_acp-<v>.tar.gz
#   dist/jvm/     hearth-<v>.jar (libhearth_jni inside, under native/<platform>/), -sources.jar,
#                 -javadoc.jar, hearth-<v>.pom
#   dist/c/       include/hearth.h, lib/libhearth.{so,a}, lib/pkgconfig/hearth.pc, bin/hearth
#
# and ends with a table of every artifact and its size. One version for all: Cargo.toml's
# [workspace.package] version (scripts/check-versions.sh runs first and fails on drift).
# Only this machine's platform is built; each binding's README says how to build another.
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

bash "$repo/scripts/check-versions.sh"
version="$(workspace_version)"
napi="$(napi_platform)"
dist="$repo/dist"
stage="$target/package" # target/ is git-ignored; rebuilt from scratch every run
rm -rf "$dist" "$stage"
mkdir -p "$dist"/{npm,python,jvm,c} "$stage"

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
mkdir -p "$dist"/c/{include,lib/pkgconfig,bin}
cp "$repo/include/hearth.h" "$dist/c/include/"
cp "$stage/libhearth.so" "$stage/libhearth.a" "$dist/c/lib/"
cp "$stage/hearth" "$dist/c/bin/"
# ${pcfiledir}: the prefix is wherever the SDK was unpacked, so it can be moved freely.
cat >"$dist/c/lib/pkgconfig/hearth.pc" <<EOF
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: hearth
Description: Hearth, an embeddable Agent Client Protocol coding agent (C ABI)
URL: https://github.com/hearth-acp/hearth
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lhearth
Libs.private: -lpthread -ldl -lm
EOF

rm -rf "$stage" # ~200 MB of copies; the disk is better spent elsewhere

echo
echo "dist/ (version $version, $napi):"
(cd "$dist" && find . -type f ! -name '*.pom' ! -name '*.h' ! -name '*.pc' -printf '%P\t%s\n' | sort) | size_table
