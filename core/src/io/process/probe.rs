//! Which sandbox backend this machine offers, found without starting a child: what
//! `initialize` reports, and what tells the permission modes whether a command would run
//! confined (where nothing confines, `accept_edits` and `bypass` ask as `ask` does).

use std::sync::OnceLock;

/// "landlock ABI 7 + seccomp", or `None` where nothing confines a command (no Landlock in
/// this kernel; macOS and Windows until their backends exist). Probed once: the kernel does
/// not change under a running process.
pub fn sandbox_backend() -> Option<&'static str> {
    static BACKEND: OnceLock<Option<String>> = OnceLock::new();
    BACKEND.get_or_init(probe).as_deref()
}

#[cfg(target_os = "linux")]
fn probe() -> Option<String> {
    hearth_linux_sandbox::landlock_abi().map(|abi| format!("landlock ABI {abi} + seccomp"))
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Option<String> {
    None
}
