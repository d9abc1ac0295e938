//! A stdio server's process (an MCP server, a language server): spawned as the leader of its
//! own process group, its stderr sent to the log, and the whole group stopped when the server
//! is done with.
//!
//! The group matters because servers are often launched through `npx`, `uvx` or a shell (and
//! `tsc --lsp` is a Node wrapper around a Go binary), so the process that speaks the protocol
//! is then a grandchild: killing only the direct child, or closing its stdin, leaves the rest
//! running. rmcp's own child-process transport has the same gap (see `tests/mcp/NOTES.md`),
//! so Hearth spawns the process itself and hands rmcp its pipes.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::io::process::group_id;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::tools::bounds::cut_line;

/// How long a stopped group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(1);

/// How much of the server's last stderr line a failure reason quotes.
const LAST_WORDS_CHARS: usize = 300;

pub struct Spawned {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub group: Arc<Group>,
    pub stderr: LastLine,
}

/// Where each line a server writes on stderr goes: the log, under the caller's target, with the
/// server's name (`server`, `line`).
pub type StderrLog = fn(&str, &str);

/// Starts `command` in `cwd` as the leader of a new process group, with its stdio piped.
pub fn spawn(
    server: &str,
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    log: StderrLog,
) -> Result<Spawned, String> {
    let mut child = Command::new(command)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| spawn_failure(command, cwd, e))?;
    let group = Arc::new(Group::led_by(child.id()));
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        group.stop();
        return Err("internal error: the server's pipes were not set up".into());
    };
    Ok(Spawned {
        child,
        stdin,
        stdout,
        group,
        stderr: forward_stderr(server, stderr, log),
    })
}

fn spawn_failure(command: &str, cwd: &Path, error: std::io::Error) -> String {
    match error.kind() {
        // A missing working directory fails the same way as a missing program.
        std::io::ErrorKind::NotFound if !cwd.is_dir() => {
            format!(
                "cannot start `{command}`: the directory {} does not exist",
                cwd.display()
            )
        }
        std::io::ErrorKind::NotFound => format!("command not found: {command}"),
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot run `{command}`: permission denied")
        }
        _ => format!("cannot start `{command}`: {error}"),
    }
}

/// Why a server's process ended, in the user's words, with its last line on stderr (often the
/// error that stopped it). `status` is `None` when the process closed its stdout but was not
/// seen to exit.
pub async fn exit_reason(status: Option<ExitStatus>, stderr: &LastLine) -> String {
    // The stderr reader is a task of its own: the line that explains the exit may still be in
    // the pipe when the exit is seen.
    stderr.drained(EXIT_WAIT).await;
    let mut reason = match status {
        Some(status) => format!("the server exited ({status})"),
        None => "the server closed its output".to_owned(),
    };
    if let Some(line) = stderr.get() {
        reason.push_str(&format!(": {line}"));
    }
    reason
}

/// How long a process that stopped talking gets to report its exit status.
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// The exit status of a process that is ending, if it ends within a moment.
pub async fn exit_status(child: &mut Child) -> Option<ExitStatus> {
    tokio::time::timeout(EXIT_WAIT, child.wait())
        .await
        .ok()
        .and_then(Result::ok)
}

/// The last non-empty line a server wrote on stderr, and whether its stderr has ended.
#[derive(Clone)]
pub struct LastLine {
    line: Arc<Mutex<Option<String>>>,
    ended: watch::Receiver<bool>,
}

impl LastLine {
    fn set(&self, line: &str) {
        let line = cut_line(line.trim(), LAST_WORDS_CHARS).into_owned();
        *self.line.lock().unwrap_or_else(|e| e.into_inner()) = Some(line);
    }

    pub fn get(&self) -> Option<String> {
        self.line.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits until everything the server wrote on stderr has been read, or `within` passed (a
    /// child it left behind may hold the pipe open).
    async fn drained(&self, within: Duration) {
        let mut ended = self.ended.clone();
        let _ = tokio::time::timeout(within, ended.wait_for(|ended| *ended)).await;
    }
}

/// Sends each line of the server's stderr to the log (never to Hearth's stdout, which may be
/// the ACP channel). Bytes that are not UTF-8 are replaced rather than ending the reader: a
/// pipe nobody drains would block the server.
fn forward_stderr(server: &str, stderr: ChildStderr, log: StderrLog) -> LastLine {
    let (ended, ended_rx) = watch::channel(false);
    let last = LastLine {
        line: Arc::default(),
        ended: ended_rx,
    };
    let server = server.to_owned();
    let kept = last.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        while matches!(reader.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end();
            if !text.is_empty() {
                log(&server, text);
                kept.set(text);
            }
            line.clear();
        }
        let _ = ended.send(true);
    });
    last
}

/// A server's process group. `stop` may be called from anywhere (a task, a session's close,
/// a `Drop`); it never blocks: the waiting happens on a thread of its own.
pub struct Group {
    /// `None` when the process had no id (it had already been reaped).
    pgid: Option<Pid>,
    stopped: AtomicBool,
    killer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Group {
    fn led_by(leader: Option<u32>) -> Self {
        Group {
            pgid: group_id(leader),
            stopped: AtomicBool::new(false),
            killer: Mutex::new(None),
        }
    }

    /// SIGTERM to every process of the group now, SIGKILL to what is left after a grace
    /// period. Later calls do nothing.
    pub fn stop(&self) {
        self.stop_after(Duration::ZERO);
    }

    /// Like `stop`, once the group has had `polite` to leave by itself (a server that was
    /// asked to exit).
    pub fn stop_after(&self, polite: Duration) {
        let Some(pgid) = self.pgid else { return };
        if self.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        if polite.is_zero() && killpg(pgid, Signal::SIGTERM) == Err(Errno::ESRCH) {
            return;
        }
        let killer = std::thread::Builder::new()
            .name("hearth-server-stop".into())
            .spawn(move || {
                if !polite.is_zero() {
                    if gone_within(pgid, polite) {
                        return;
                    }
                    let _ = killpg(pgid, Signal::SIGTERM);
                }
                if !gone_within(pgid, GRACE) {
                    let _ = killpg(pgid, Signal::SIGKILL);
                }
            });
        match killer {
            Ok(handle) => *self.killer.lock().unwrap_or_else(|e| e.into_inner()) = Some(handle),
            // No thread to wait on: no grace either.
            Err(_) => {
                let _ = killpg(pgid, Signal::SIGKILL);
            }
        }
    }

    /// Waits until the group is gone or killed: at most the grace period after `stop`.
    pub fn wait(&self) {
        let killer = self.killer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(killer) = killer {
            let _ = killer.join();
        }
    }

    /// Whether a stop has finished (or none is under way): nothing is left to wait for.
    pub fn settled(&self) -> bool {
        let killer = self.killer.lock().unwrap_or_else(|e| e.into_inner());
        killer.as_ref().is_none_or(|killer| killer.is_finished())
    }
}

/// Polls the group until it is empty (true), or `limit` passed (false).
fn gone_within(pgid: Pid, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if killpg(pgid, None) == Err(Errno::ESRCH) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}
