//! Links `hearth` with the functions start-up runs packed together (`startup-order.txt`, made
//! by `scripts/startup-order.py`): `hearth acp` then maps about 1 MB of its code to answer
//! `initialize`, start and answer a `session/list`, not pages strewn over all of `.text`
//! (RSS after `initialize` 12.6 → 6.5 MiB: `benches/README.md`, "Cold start").
//!
//! Only for release builds for x86_64 Linux (the list's names are that build's), and only
//! when the linker takes the option: rust-lld, the default since Rust 1.90, does; GNU ld,
//! which an older Rust, a distribution's Rust or one's own linker settings may use, does not.
//! A name the binary does not define is skipped, so a stale list costs nothing but the gain.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=startup-order.txt");
    let release = env::var("PROFILE").is_ok_and(|profile| profile == "release");
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") || !release {
        return;
    }
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("startup-order.txt");
    let option = format!("-Wl,--symbol-ordering-file={}", order.display());
    if !links_with(&option) {
        println!(
            "cargo:warning=the linker does not take --symbol-ordering-file: start-up's code is not packed"
        );
        return;
    }
    println!("cargo:rustc-link-arg-bin=hearth={option}");
    println!("cargo:rustc-link-arg-bin=hearth=-Wl,--no-warn-symbol-ordering");
}

/// Whether an empty program links with `option`, by the same rustc, flags and linker as
/// this build.
fn links_with(option: &str) -> bool {
    let (Some(rustc), Some(out)) = (env::var_os("RUSTC"), env::var_os("OUT_DIR")) else {
        return false;
    };
    let out = PathBuf::from(out);
    let source = out.join("link_probe.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let mut probe = Command::new(rustc);
    probe
        .args([
            "--crate-type",
            "bin",
            "--target",
            "x86_64-unknown-linux-gnu",
            "-o",
        ])
        .arg(out.join("link_probe"))
        .arg(format!("-Clink-arg={option}"));
    if let Ok(flags) = env::var("CARGO_ENCODED_RUSTFLAGS") {
        probe.args(flags.split('\u{1f}').filter(|flag| !flag.is_empty()));
    }
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        probe
            .arg("-C")
            .arg(format!("linker={}", linker.to_string_lossy()));
    }
    probe
        .arg(source)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}
