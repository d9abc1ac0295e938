//! Everything OS-specific about the children Hearth starts, for Unix: a child leads a process
//! group of its own (so the whole tree it starts — pipelines, background jobs, `npx`
//! grandchildren — is signalled at once; signalling only the leader would orphan the rest),
//! the signals that stop a group, the names of the signals that end a process, the pipe a
//! command's two output streams share, and the shell (`sh -c`).
//!
//! Signals go through `nix::sys::signal::killpg` (the crate forbids `unsafe`, which rules out
//! calling `libc` directly; spawning `kill -SIG -pgid` would cost a process per signal and
//! cannot be relied on from `Drop`).

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use super::{OutputReader, Shell};

/// A started child's process group (its id is the leader's pid).
#[derive(Debug, Clone)]
pub struct Tree(Pid);

impl Tree {
    /// The group the just-spawned `child` leads (it was started by `lead_a_tree`) — never 0
    /// (or negative): `killpg(0)` would signal the engine's own group. `None` when it has no
    /// id any more (it was reaped).
    pub fn led_by(child: &Child) -> std::io::Result<Option<Tree>> {
        Ok(child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .filter(|&pid| pid > 0)
            .map(|pid| Tree(Pid::from_raw(pid))))
    }

    /// Asks every process of the group to stop (SIGTERM); false when none is left.
    pub fn terminate(&self) -> bool {
        // ESRCH (the group is already gone) is the expected outcome, not an error.
        killpg(self.0, Signal::SIGTERM) != Err(Errno::ESRCH)
    }

    /// Kills every process of the group (SIGKILL).
    pub fn kill(&self) {
        let _ = killpg(self.0, Signal::SIGKILL);
    }

    /// Whether no process of the group is left.
    pub fn is_gone(&self) -> bool {
        killpg(self.0, None) == Err(Errno::ESRCH)
    }
}

/// Makes the child `command` starts the leader of a new process group.
pub fn lead_a_tree(command: &mut Command) {
    command.process_group(0);
}

/// Adds `args` to `command` (the program does not matter on Unix: arguments are not quoted).
pub fn pass_args(command: &mut Command, _program: &OsStr, args: &[OsString]) {
    command.args(args);
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

/// The shell `run_command` runs a command line with.
pub fn shell() -> &'static Shell {
    const SH: Shell = Shell {
        program: "sh",
        flags: &["-c"],
    };
    &SH
}

/// Makes a sandboxed child's private temp dir, readable by its owner only (other users'
/// processes must not read or plant files in it).
#[cfg_attr(not(any(target_os = "linux", target_os = "macos")), allow(dead_code))]
pub fn private_dir(path: &Path) -> Result<(), String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(|e| format!("cannot make the private temp dir {}: {e}", path.display()))
}
