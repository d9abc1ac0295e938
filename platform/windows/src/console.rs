//! The console side of a child: the flags it is created with, and Ctrl+Break, the one polite
//! stop Windows has for a console program (there are no signals; `WM_CLOSE` only reaches
//! programs with a window).

use std::io;

use windows_sys::Win32::System::Console::{
    CTRL_BREAK_EVENT, GenerateConsoleCtrlEvent, GetConsoleCP,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CREATE_SUSPENDED,
};

/// The creation flags of a child that leads a tree:
/// - suspended, so it is inside its job before it runs a single instruction (`Job::start`);
/// - a process group of its own, so Ctrl+Break can be sent to it and its descendants alone,
///   and the user's Ctrl+C in the engine's console does not reach it (as a Unix process
///   group keeps the terminal's SIGINT away);
/// - no window when the engine has no console: a console program started by a process
///   without one gets a new console window of its own, one per command.
pub fn creation_flags() -> u32 {
    let flags = CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP;
    if has_console() {
        flags
    } else {
        flags | CREATE_NO_WINDOW
    }
}

/// Whether the engine is attached to a console (its children then share it).
fn has_console() -> bool {
    // SAFETY: no arguments; it fails (returns 0) when the process has no console.
    unsafe { GetConsoleCP() != 0 }
}

/// Sends Ctrl+Break to the process group `group` (the id of the process started with
/// `creation_flags`). Fails when the group does not share the engine's console — then no
/// polite stop can reach it.
pub fn ctrl_break(group: u32) -> io::Result<()> {
    // Group 0 means every process on the console, the engine included.
    if group == 0 {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: plain values; the call touches no memory of ours.
    if unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, group) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
