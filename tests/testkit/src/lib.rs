//! Test support for Hearth's Rust tests.
//!
//! - [`AcpClient`]: a minimal ACP client over any [`Transport`] — in-process through
//!   `Engine` ([`InProcess`]) or a real `hearth acp` child ([`Stdio`]) — that validates every
//!   frame the agent emits against the official schema.
//! - [`transcript`]: golden transcripts (frames in, expected frames out, with placeholders).
//! - [`absolute`], [`file_uri`]: a Unix-form absolute path in this OS's form; a path's `file://` URI.
//! - [`sandbox`] (Linux): whether the sandbox's tests run here, or skip.
//! - [`nested_cargo`]: a build started from a test or bench, run as from a shell.

mod client;
pub mod nested_cargo;
mod paths;
pub mod processes;
#[cfg(target_os = "linux")]
pub mod sandbox;
mod schema;
pub mod transcript;
mod transport;

pub use client::{AcpClient, PATIENCE, agent_text, chunk_text};
pub use paths::{absolute, file_uri};
pub use schema::Schema;
pub use transport::{InProcess, Stdio, Transport};

use std::path::{Path, PathBuf};

/// The repository root (the workspace holding `Cargo.lock`).
pub fn repo_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|dir| dir.join("Cargo.lock").exists())
        .unwrap_or(&here)
        .to_path_buf()
}

/// A binary built by cargo next to the test binaries (`target/debug/NAME`, `.exe` on Windows).
pub fn cargo_bin(name: &str) -> PathBuf {
    // Beside the test's own `deps/`: `target/debug`, or `target/<triple>/debug` in a cross
    // build (under wine, `target/debug` would be the host's binary).
    let test = std::env::current_exe().expect("the test's own path");
    let profile = test
        .parent()
        .and_then(Path::parent)
        .expect("a test runs from <target>/<profile>/deps");
    let path = profile.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo build` first",
        path.display()
    );
    path
}
