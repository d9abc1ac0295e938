//! A command's process group: the shell is spawned as the leader of a new group so that the
//! whole tree it starts (pipelines, background jobs, `npx` grandchildren) can be signalled at
//! once. Killing only the shell would orphan the rest.
//!
//! Signals go through `nix::sys::signal::killpg` (the crate forbids `unsafe`, which rules out
//! calling `libc` directly; spawning `kill -SIG -pgid` would cost a process per signal and
//! cannot be relied on from `Drop`).

use std::process::ExitStatus;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// A process group that is killed when this value is dropped, unless it was already killed:
/// whatever happens to the future running a command, nothing it started survives.
pub struct ProcessGroup {
    pgid: Option<Pid>,
}

impl ProcessGroup {
    /// The group led by the process `leader` (spawned with `process_group(0)`).
    pub fn led_by(leader: Option<u32>) -> Self {
        ProcessGroup {
            pgid: group_id(leader),
        }
    }

    /// Asks every process of the group to stop (SIGTERM).
    pub fn terminate(&self) {
        self.signal(Signal::SIGTERM);
    }

    /// Kills every process of the group (SIGKILL). Later calls and the drop do nothing, so a
    /// recycled group id is never signalled.
    pub fn kill(&mut self) {
        self.signal(Signal::SIGKILL);
        self.pgid = None;
    }

    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is the expected outcome, not an error.
            let _ = killpg(pgid, signal);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The id of the group the process `leader` leads — never 0 (or negative): `killpg(0)` would
/// signal the engine's own group.
pub fn group_id(leader: Option<u32>) -> Option<Pid> {
    leader
        .and_then(|pid| i32::try_from(pid).ok())
        .filter(|&pid| pid > 0)
        .map(Pid::from_raw)
}

/// The exit code and the name of the terminating signal of a finished process.
pub fn exit_parts(status: ExitStatus) -> (Option<i32>, Option<String>) {
    use std::os::unix::process::ExitStatusExt;
    let signal = status
        .signal()
        .map(|number| match Signal::try_from(number) {
            Ok(signal) => signal.as_str().to_owned(),
            Err(_) => format!("signal {number}"),
        });
    (status.code(), signal)
}
