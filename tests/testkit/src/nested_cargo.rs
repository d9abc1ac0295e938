//! Builds started from inside a test or a bench (which `cargo` runs).

use std::ffi::OsStr;
use std::process::Command;

/// `program` (cargo, or a script that runs it), to be run as from a shell: without the
/// variables cargo sets for the test or bench running it (`CARGO_MANIFEST_DIR`,
/// `CARGO_PKG_NAME`, …). ring's build script runs again whenever those differ, so a build
/// made from a test and one made from a shell each rebuilt ring and all above it, the engine
/// included: 15 s each way in debug, 1 min 34 s in release, here.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(set_by_cargo_for_a_run) {
            command.env_remove(name);
        }
    }
    command
}

fn set_by_cargo_for_a_run(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_MANIFEST_")
        || matches!(
            name,
            "CARGO_CRATE_NAME" | "CARGO_PRIMARY_PACKAGE" | "CARGO_TARGET_TMPDIR" | "OUT_DIR"
        )
}
