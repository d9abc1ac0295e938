//! A stdio server's process (an MCP server, a language server): started by the launcher as
//! the leader of its own process group, its stderr sent to the log (its last line kept for
//! the reason it ended), and the whole group stopped when the server is done with.
//!
//! The group matters because servers are often launched through `npx`, `uvx` or a shell (and
//! `tsc --lsp` is a Node wrapper around a Go binary), so the process that speaks the protocol
//! is then a grandchild: killing only the direct child, or closing its stdin, leaves the rest
//! running. rmcp's own child-process transport has the same gap (see `tests/mcp/NOTES.md`),
//! so Hearth spawns the process itself and hands rmcp its pipes.

use std::path::Path;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;

use super::group::Group;
use super::launch::{Launch, Launcher, StartError, Started, Stdio};
use crate::io::output::cut_line;

/// How much of the server's last stderr line a failure reason quotes.
const LAST_WORDS_CHARS: usize = 300;

pub struct Spawned {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub group: Arc<Group>,
    pub stderr: LastLine,
    /// The sandbox backend confining it (`Started::sandbox`); `None`: unconfined.
    pub sandbox: Option<String>,
}

/// Where each line a server writes on stderr goes: the log, under the caller's target, with the
/// server's name (`server`, `line`).
pub type StderrLog = fn(&str, &str);

/// Starts the server `server` as `launch` says, with its stdio piped; the error says why it
/// did not start, in the user's words.
pub fn start_server(
    launcher: &Launcher,
    server: &str,
    launch: Launch,
    log: StderrLog,
) -> Result<Spawned, String> {
    let command = launch.program.to_string_lossy().into_owned();
    let cwd = launch.cwd.clone();
    let Started {
        mut child,
        group,
        sandbox,
        ..
    } = launcher.start(launch, Stdio::Piped).map_err(|e| match e {
        StartError::Refused(reason) => format!("cannot start `{command}`: {reason}"),
        StartError::Io(e) => spawn_failure(&command, &cwd, e),
    })?;
    if sandbox.as_deref() == Some("none") {
        // Asked to run confined where nothing confines: said, never silent.
        tracing::warn!(server = %server, "runs unconfined: this system has no sandbox");
    }
    let group = Arc::new(group);
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
        sandbox,
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
