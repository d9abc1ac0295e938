//! Everything OS-specific about the children Hearth starts, for Unix: a child leads a process
//! group of its own (so the whole tree it starts — pipelines, background jobs, `npx`
//! grandchildren — is signalled at once; signalling only the leader would orphan the rest),
//! the signals that stop a group, the names of the signals that end a process, and the pipe
//! a command's two output streams share.
//!
//! Signals go through `nix::sys::signal::killpg` (the crate forbids `unsafe`, which rules out
//! calling `libc` directly; spawning `kill -SIG -pgid` would cost a process per signal and
//! cannot be relied on from `Drop`).

use std::process::{ExitStatus, Stdio};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::net::unix::pipe;
use tokio::process::Command;

use super::OutputReader;

/// A started child's process group (its id is the leader's pid).
#[derive(Debug, Clone, Copy)]
pub struct Tree(Pid);

impl Tree {
    /// The group the process `leader` leads (it was started by `lead_a_tree`) — never 0 (or
    /// negative): `killpg(0)` would signal the engine's own group.
    pub fn led_by(leader: Option<u32>) -> Option<Tree> {
        leader
            .and_then(|pid| i32::try_from(pid).ok())
            .filter(|&pid| pid > 0)
            .map(|pid| Tree(Pid::from_raw(pid)))
    }

    /// Asks every process of the group to stop (SIGTERM); false when none is left.
    pub fn terminate(self) -> bool {
        // ESRCH (the group is already gone) is the expected outcome, not an error.
        killpg(self.0, Signal::SIGTERM) != Err(Errno::ESRCH)
    }

    /// Kills every process of the group (SIGKILL).
    pub fn kill(self) {
        let _ = killpg(self.0, Signal::SIGKILL);
    }

    /// Whether no process of the group is left.
    pub fn is_gone(self) -> bool {
        killpg(self.0, None) == Err(Errno::ESRCH)
    }
}

/// Makes the child `command` starts the leader of a new process group.
pub fn lead_a_tree(command: &mut Command) {
    command.process_group(0);
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

/// One pipe for a child's stdout and stderr (so the interleaving is the one a terminal would
/// show): the two write ends for the child, and the read end.
pub fn merged_output() -> std::io::Result<(Stdio, Stdio, OutputReader)> {
    let (reader, writer) = std::io::pipe()?;
    let stdout = Stdio::from(writer.try_clone()?);
    let reader = pipe::Receiver::from_owned_fd(reader.into())?;
    Ok((stdout, Stdio::from(writer), Box::new(reader)))
}
