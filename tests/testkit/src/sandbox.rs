//! Whether the sandbox's tests can prove anything here: without Landlock nothing is confined,
//! so they skip, loudly — unless `HEARTH_REQUIRE_SANDBOX=1` (CI's `cargo test` stage), and then
//! they fail.

/// Whether this kernel confines; without it, a skip (or, required, a failure).
pub fn landlock_here() -> bool {
    if hearth_linux_sandbox::landlock_abi().is_some() {
        return true;
    }
    assert_ne!(
        std::env::var("HEARTH_REQUIRE_SANDBOX").as_deref(),
        Ok("1"),
        "HEARTH_REQUIRE_SANDBOX=1 but this kernel has no Landlock"
    );
    eprintln!("SKIPPED: this kernel has no Landlock, so nothing is confined");
    false
}
