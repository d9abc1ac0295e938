//! Everything OS-specific about the children Hearth starts, for Windows: a child's whole tree
//! lives in a Job Object of its own (Windows has no process groups to signal: a process's
//! children are not findable once it exits, but a job keeps every process started inside it),
//! the polite and forced stops, exit codes, the pipe a command's two output streams share,
//! the shell, and how a program gets its arguments.
//!
//! - The child is created suspended and assigned to its job before it runs (so not even its
//!   first grandchild can start outside), then resumed (`hearth_windows::Job::start`). The job
//!   kills whatever is left in it when its last handle closes: when the `Group` is dropped,
//!   or when the engine itself dies.
//! - The polite stop is Ctrl+Break to the child's console process group (the child is created
//!   with a group of its own): console programs — shells, `node`, `python` — exit on it as on
//!   a terminal's Ctrl+Break. It only reaches a child that shares the engine's console; when
//!   it cannot be sent, the job is terminated at once, since waiting would only delay the
//!   forced stop. The forced stop is `TerminateJobObject`.
//! - The shell (`shell`): PowerShell, what Codex and Claude Code run on Windows, so the
//!   command lines models write there; `cmd.exe` only where there is none (Wine).
//! - Arguments (`pass_args`): std quotes them for CommandLineToArgvW, which every program but
//!   cmd.exe parses; cmd.exe gets its command line raw.
//! - The Win32 calls are in the `hearth-windows` crate (this crate forbids `unsafe`).

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::FutureExt;
use hearth_windows::Job;
use tokio::net::windows::named_pipe::{PipeMode, ServerOptions};
use tokio::process::{Child, Command};

use super::{OutputReader, Shell};

/// The exit code of the processes a forced stop kills (as `taskkill /f` gives them).
const KILLED_EXIT_CODE: u32 = 1;

/// A started child's job (and the id of its console process group: the child's own).
#[derive(Debug, Clone)]
pub struct Tree {
    job: Arc<Job>,
    leader: u32,
}

impl Tree {
    /// Puts the just-spawned, still suspended `child` (started by `lead_a_tree`) in a job of
    /// its own and lets it run. `None` when it has no handle any more; an error when it could
    /// not be put in a job (it is then killed with its `Child`, never left running outside).
    pub fn led_by(child: &Child) -> std::io::Result<Option<Tree>> {
        let (Some(handle), Some(leader)) = (child.raw_handle(), child.id()) else {
            return Ok(None);
        };
        let job = Job::start(handle)?;
        Ok(Some(Tree {
            job: Arc::new(job),
            leader,
        }))
    }

    /// Asks every process of the tree to stop (Ctrl+Break), or kills them when that cannot
    /// reach them; false when none is left.
    pub fn terminate(&self) -> bool {
        if self.is_gone() {
            return false;
        }
        if hearth_windows::ctrl_break(self.leader).is_err() {
            self.kill();
        }
        true
    }

    /// Kills every process of the tree.
    pub fn kill(&self) {
        let _ = self.job.terminate(KILLED_EXIT_CODE);
    }

    /// Whether no process of the tree is left.
    pub fn is_gone(&self) -> bool {
        // A job that cannot be asked is treated as still busy: the forced stop follows.
        self.job.active_processes().is_ok_and(|active| active == 0)
    }
}

/// Makes the child `command` starts suspended and in a console process group of its own (see
/// `hearth_windows::creation_flags`); `Tree::led_by` then puts it in its job and resumes it.
pub fn lead_a_tree(command: &mut Command) {
    command.creation_flags(hearth_windows::creation_flags());
}

/// Adds `args` to `command`. cmd.exe does not parse the quoting std gives an argument
/// (`"` as `\"`, for CommandLineToArgvW, which every other program uses), so what follows its
/// `/c` goes as typed, between the outer quotes its `/s` strips.
pub fn pass_args(command: &mut Command, program: &OsStr, args: &[OsString]) {
    let is_cmd = Path::new(program)
        .file_stem()
        .is_some_and(|stem| stem.eq_ignore_ascii_case("cmd"));
    let after_c = args
        .iter()
        .position(|arg| arg.eq_ignore_ascii_case("/c"))
        .map(|at| at + 1);
    match after_c.filter(|_| is_cmd) {
        Some(at) => {
            command.args(&args[..at]);
            let mut line = OsString::from("\"");
            for (index, arg) in args[at..].iter().enumerate() {
                if index > 0 {
                    line.push(" ");
                }
                line.push(arg);
            }
            line.push("\"");
            command.raw_arg(line);
        }
        None => {
            command.args(args);
        }
    }
}

/// The exit code of a finished process; Windows has no terminating signal.
pub fn exit_parts(status: ExitStatus) -> (Option<i32>, Option<String>) {
    (status.code(), None)
}

/// Distinguishes the engine's output pipes from each other.
static PIPES: AtomicU64 = AtomicU64::new(0);

/// One pipe for a child's stdout and stderr (so the interleaving is the one a terminal would
/// show): the two write ends for the child, and the read end. An anonymous pipe cannot be
/// read asynchronously on Windows, so this is a named pipe: the engine's end is overlapped
/// (read by tokio), the child's is an ordinary handle. One instance, local clients only: no
/// other process can take the pipe between its creation and the engine opening it.
pub fn merged_output() -> std::io::Result<(Stdio, Stdio, OutputReader)> {
    let name = format!(
        r"\\.\pipe\hearth-output-{}-{}",
        std::process::id(),
        PIPES.fetch_add(1, Ordering::Relaxed)
    );
    let server = ServerOptions::new()
        .first_pipe_instance(true)
        .max_instances(1)
        .reject_remote_clients(true)
        .access_outbound(false)
        .pipe_mode(PipeMode::Byte)
        .create(&name)?;
    let writer = std::fs::OpenOptions::new().write(true).open(&name)?;
    // The client end is open, so the connection is already made: the first poll completes it.
    match server.connect().now_or_never() {
        Some(connected) => connected?,
        None => return Err(std::io::Error::other("the output pipe did not connect")),
    }
    let stdout = Stdio::from(writer.try_clone()?);
    Ok((stdout, Stdio::from(writer), Box::new(server)))
}

/// PowerShell 7, when it is installed.
const PWSH: Shell = Shell {
    program: "pwsh.exe",
    flags: &["-NoProfile", "-NonInteractive", "-Command"],
};
/// Windows PowerShell 5.1, in every Windows since 10 (and 7 with an update).
const WINDOWS_POWERSHELL: Shell = Shell {
    program: "powershell.exe",
    flags: &["-NoProfile", "-NonInteractive", "-Command"],
};
/// The last resort (Wine, a Windows without PowerShell): `/d` skips AutoRun, `/s` keeps the
/// command line as it is between its outer quotes.
const CMD: Shell = Shell {
    program: "cmd.exe",
    flags: &["/d", "/s", "/c"],
};

/// The shell `run_command` runs a command line with: PowerShell, what Codex and Claude Code
/// run on Windows (the models know its syntax there), `pwsh` when it is on PATH, else Windows
/// PowerShell, else `cmd.exe`. Looked for once: PATH does not change under the engine.
pub fn shell() -> &'static Shell {
    static CHOSEN: std::sync::OnceLock<&'static Shell> = std::sync::OnceLock::new();
    CHOSEN.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        [&PWSH, &WINDOWS_POWERSHELL]
            .into_iter()
            .find(|shell| std::env::split_paths(&path).any(|dir| dir.join(shell.program).is_file()))
            .unwrap_or(&CMD)
    })
}
