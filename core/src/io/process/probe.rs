//! Which sandbox backend this machine offers, found without starting a child: what
//! `initialize` reports, and what tells the permission modes whether a command would run
//! confined (where nothing confines, `accept_edits` asks as `ask` does).

use std::sync::OnceLock;

use crate::sandbox::Settings;

/// The backend of the bwrap layer, as commands' results and `initialize` name it; a backend
/// that begins so gave its command a private `/tmp`.
pub const BWRAP_BACKEND: &str = "bwrap + seccomp";

/// The backend of the Landlock layer at `abi`.
#[cfg(target_os = "linux")]
pub fn landlock_backend(abi: i32) -> String {
    format!("landlock ABI {abi} + seccomp")
}

/// Whether anything on this machine confines a command: what the permission modes decide by,
/// at every call, so it is probed once (the kernel and the OS's tools do not change under a
/// running process).
pub fn sandbox_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| available().is_some())
}

/// The backend a command would run under with `settings` — "bwrap + seccomp" where the bwrap
/// layer would be chosen (bwrap installed), else "landlock ABI 7 + seccomp" — or `None` where
/// nothing confines a command (no Landlock in this kernel; macOS without `sandbox-exec`;
/// Windows). For `initialize` and `/sandbox`: it looks for bwrap each time.
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
pub fn sandbox_backend(settings: &Settings) -> Option<String> {
    let backend = available()?;
    #[cfg(target_os = "linux")]
    {
        if settings.bwrap == crate::sandbox::Bwrap::Auto && super::bwrap::find(&[]).is_some() {
            return Some(BWRAP_BACKEND.into());
        }
    }
    Some(backend)
}

/// The layer that confines without bwrap: Landlock (without it nothing confines, bwrap or
/// not: `hearth_linux_sandbox::prepare`).
#[cfg(target_os = "linux")]
fn available() -> Option<String> {
    hearth_linux_sandbox::landlock_abi().map(landlock_backend)
}

#[cfg(target_os = "macos")]
fn available() -> Option<String> {
    super::confine::available().then(|| super::confine::BACKEND.into())
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn available() -> Option<String> {
    None
}
