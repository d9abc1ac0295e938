//! Links `hearth` with the functions start-up runs packed together (`startup-order.txt`, made
//! by `scripts/startup-order.py`): `hearth acp` then maps about 1 MB of its code before
//! answering `initialize`, not pages strewn over all of `.text` (RSS after `initialize`
//! 12.6 → 6.5 MiB: `benches/README.md`, "Cold start").
//!
//! Only for release builds for x86_64 Linux, whose default linker (rust-lld) reads the list;
//! the cross builds link with GNU ld or zig, and macOS and Windows with linkers of their own.
//! A name the binary does not define is skipped, so a stale list costs nothing but the gain.

fn main() {
    println!("cargo:rerun-if-changed=startup-order.txt");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let target = std::env::var("TARGET").unwrap_or_default();
    let release = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    // A linker of one's own (cargo's `linker` setting, or `-C linker` in the flags) may not
    // know the option.
    let own_linker = std::env::var_os("RUSTC_LINKER").is_some()
        || std::env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|f| f.contains("linker"));
    if target != "x86_64-unknown-linux-gnu" || !release || own_linker {
        return;
    }
    let order = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("startup-order.txt");
    println!(
        "cargo:rustc-link-arg-bin=hearth=-Wl,--symbol-ordering-file={}",
        order.display()
    );
    println!("cargo:rustc-link-arg-bin=hearth=-Wl,--no-warn-symbol-ordering");
}
