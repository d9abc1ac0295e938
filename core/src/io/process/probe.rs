//! Which sandbox backend this machine offers, found without starting a child: what
//! `initialize` reports, and what tells the permission modes whether a command would run
//! confined (where nothing confines, `accept_edits` asks as `ask` does).

use crate::sandbox::Settings;

/// The backend a command would run under with `settings` — "bwrap + seccomp" where the bwrap
/// layer would be chosen, else "landlock ABI 7 + seccomp" — or `None` where nothing confines
/// a command (neither in this kernel or on PATH; macOS without `sandbox-exec`; Windows).
pub fn sandbox_backend(settings: &Settings) -> Option<String> {
    probe(settings)
}

#[cfg(target_os = "linux")]
fn probe(settings: &Settings) -> Option<String> {
    use std::sync::OnceLock;

    use crate::sandbox::Bwrap;

    // Probed once: the kernel does not change under a running process.
    static LANDLOCK: OnceLock<Option<i32>> = OnceLock::new();
    // Without Landlock nothing confines, bwrap or not (`hearth_linux_sandbox::prepare`).
    let abi = (*LANDLOCK.get_or_init(hearth_linux_sandbox::landlock_abi))?;
    let path: Vec<_> = std::env::var_os("PATH")
        .map(|path| ("PATH".into(), path))
        .into_iter()
        .collect();
    if settings.bwrap == Bwrap::Auto && super::bwrap::find(&path).is_some() {
        return Some("bwrap + seccomp".into());
    }
    Some(format!("landlock ABI {abi} + seccomp"))
}

#[cfg(target_os = "macos")]
fn probe(_settings: &Settings) -> Option<String> {
    super::confine::available().then(|| super::confine::BACKEND.into())
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn probe(_settings: &Settings) -> Option<String> {
    None
}
