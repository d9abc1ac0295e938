//! include/hearth.h is generated from this crate and checked in: these tests fail when it is
//! stale, and check that it compiles cleanly as C11 and as C++.
//! `UPDATE_HEADER=1 cargo test -p hearth-ffi --test header` rewrites it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn header_path() -> PathBuf {
    crate_dir().join("../include/hearth.h")
}

fn generate() -> String {
    let config =
        cbindgen::Config::from_file(crate_dir().join("cbindgen.toml")).expect("ffi/cbindgen.toml");
    let mut header = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir())
        .with_config(config)
        .generate()
        .expect("cbindgen failed")
        .write(&mut header);
    String::from_utf8(header).expect("the header is UTF-8")
}

#[test]
fn checked_in_header_is_current() {
    let fresh = generate();
    let path = header_path();
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&path, &fresh).expect("write include/hearth.h");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "include/hearth.h is stale; run `UPDATE_HEADER=1 cargo test -p hearth-ffi --test header`"
    );
}

/// A translation unit that includes the header twice (the include guard must hold) and uses
/// every declaration, so the compiler checks the types and not just the syntax.
const PROBE: &str = r#"
#include "hearth.h"
#include "hearth.h"

static void on_frame(void *user_data, const char *frame, size_t len) {
    (void)user_data; (void)frame; (void)len;
}

int probe(void);
int probe(void) {
    hearth_frame_fn f = on_frame;
    hearth_free_fn g = 0;
    hearth_engine *engine = 0;
    int status = hearth_engine_new("", 0, f, 0, g, &engine);
    if (status == HEARTH_OK) status = hearth_engine_send(engine, "{}", 2);
    hearth_engine_free(engine);
    const char *message = hearth_last_error();
    const char *version = hearth_version();
    uint32_t abi = hearth_abi_version();
    return status + (message != 0) + (version != 0) + (int)(abi == HEARTH_ABI_VERSION)
        + HEARTH_VERSION_MAJOR + HEARTH_VERSION_MINOR + HEARTH_VERSION_PATCH
        + HEARTH_NULL_ARGUMENT + HEARTH_INVALID_UTF8 + HEARTH_BAD_CONFIG + HEARTH_STORE_ERROR
        + HEARTH_CLOSED + HEARTH_PANIC + HEARTH_INTERNAL;
}
"#;

/// Runs `compiler` on the probe against a freshly generated header (the test above keeps
/// the checked-in one equal to it); None when the compiler is not installed.
fn compile_probe(compiler: &str, args: &[&str], file_name: &str) -> Option<std::process::Output> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hearth.h"), generate()).unwrap();
    let source = dir.path().join(file_name);
    std::fs::write(&source, PROBE).unwrap();
    Command::new(compiler)
        .args(args)
        .arg("-I")
        .arg(dir.path())
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(dir.path().join("probe.o"))
        .output()
        .ok()
}

fn assert_compiles(compiler: &str, args: &[&str], file_name: &str) {
    let Some(output) = compile_probe(compiler, args, file_name) else {
        eprintln!("skipped: `{compiler}` is not installed, so the header was not compiled");
        return;
    };
    assert!(
        output.status.success(),
        "`{compiler} {}` rejected include/hearth.h:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn header_compiles_as_c11() {
    assert_compiles(
        "cc",
        &["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"],
        "probe.c",
    );
}

#[test]
fn header_compiles_as_cpp() {
    assert_compiles(
        "c++",
        &["-fsyntax-only", "-Wall", "-Wextra", "-Werror"],
        "probe.cpp",
    );
}
