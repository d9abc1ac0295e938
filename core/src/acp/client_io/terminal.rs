//! Running a command in the client's terminal (`terminal/*`): create it, poll its output and
//! forward only what is new, race its exit against the timeout and the cancel token, kill it
//! when needed, and always release it — the spec requires that every created terminal is
//! released, on every path, including a dropped future.
//!
//! Tests: `acp/client_io/tests.rs` (against a fake client), `core/tests/client_io.rs` (through
//! the whole engine).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::{sleep, timeout};
use tokio_util::sync::CancellationToken;

use super::{ClientError, SessionClient, call, failure};
use crate::io::output::{DeltaStream, KeptOutput, STREAM_CAP_FACTOR};
use crate::io::process::shell;
use crate::io::{CommandResult, CommandSpec, IoError, floor_char_boundary};

/// How often the output is polled while the command runs: live enough for a human, a handful
/// of small requests a second for the client.
const POLL_INTERVAL: Duration = Duration::from_millis(150);
/// The longest we wait for the client on `kill`, the last `output` and `release`, which run
/// with their own token because the turn's token may be the one that already fired.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(5);
/// How much of the previously seen output is looked for when the client dropped the start of
/// its buffer.
const ANCHOR_BYTES: usize = 256;

pub(super) async fn run_in_terminal(
    client: Arc<SessionClient>,
    spec: CommandSpec,
    output: UnboundedSender<String>,
    cancel: CancellationToken,
) -> Result<CommandResult, IoError> {
    // The editor runs on this machine: the command line is written for this OS's shell.
    let shell = shell();
    let created = call(
        &client,
        "terminal/create",
        json!({
            "command": shell.program,
            "args": shell.args(&spec.command),
            "cwd": spec.cwd,
            "outputByteLimit": spec.output_limit,
        }),
        &cancel,
    )
    .await
    .map_err(|e| failure("start a terminal", e))?;
    let Some(id) = created.get("terminalId").and_then(Value::as_str) else {
        return Err(IoError(
            "the editor created a terminal without an id".into(),
        ));
    };
    let mut terminal = Terminal {
        client,
        id: id.to_owned(),
        released: false,
    };
    let result = terminal.follow(&spec, output, &cancel).await;
    terminal.release().await;
    result
}

/// Why following the terminal ended.
enum Ending {
    Exited(ExitStatus),
    TimedOut,
    Cancelled,
}

#[derive(Default)]
struct ExitStatus {
    exit_code: Option<i32>,
    signal: Option<String>,
}

impl ExitStatus {
    fn parse(value: &Value) -> Self {
        ExitStatus {
            exit_code: value
                .get("exitCode")
                .and_then(Value::as_i64)
                .and_then(|code| i32::try_from(code).ok()),
            signal: value
                .get("signal")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }
}

/// One `terminal/output` answer.
struct Snapshot {
    output: String,
    truncated: bool,
    exit_status: Option<ExitStatus>,
}

impl Snapshot {
    fn parse(value: &Value) -> Self {
        Snapshot {
            output: value
                .get("output")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            truncated: value.get("truncated").and_then(Value::as_bool) == Some(true),
            exit_status: value
                .get("exitStatus")
                .filter(|status| status.is_object())
                .map(ExitStatus::parse),
        }
    }
}

/// A created terminal; released on drop if it was not released before.
struct Terminal {
    client: Arc<SessionClient>,
    id: String,
    released: bool,
}

impl Terminal {
    async fn follow(
        &self,
        spec: &CommandSpec,
        output: UnboundedSender<String>,
        cancel: &CancellationToken,
    ) -> Result<CommandResult, IoError> {
        let mut stream =
            DeltaStream::new(output, spec.output_limit.saturating_mul(STREAM_CAP_FACTOR));
        let mut cursor = Cursor::default();
        // Requests abandoned when another branch wins are simply dropped.
        let quiet = CancellationToken::new();
        let wait = self.call("terminal/wait_for_exit", &quiet);
        let deadline = sleep(spec.timeout);
        tokio::pin!(wait, deadline);

        let ending = loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => break Ending::Cancelled,
                exit = &mut wait => {
                    let exit = exit.map_err(|e| failure("wait for the command", e))?;
                    break Ending::Exited(ExitStatus::parse(&exit));
                }
                _ = &mut deadline => break Ending::TimedOut,
                polled = self.poll_after(POLL_INTERVAL, &quiet) => {
                    stream.send(&cursor.advance(&polled?.output));
                }
            }
        };
        if !matches!(ending, Ending::Exited(_)) {
            self.cleanup("terminal/kill").await?;
        }
        let last = Snapshot::parse(&self.cleanup("terminal/output").await?);
        stream.send(&cursor.advance(&last.output));

        let timed_out = matches!(ending, Ending::TimedOut);
        let (output, truncated) = kept_output(&last, spec.output_limit);
        let status = match ending {
            Ending::Exited(status) => status,
            _ => last.exit_status.unwrap_or_default(),
        };
        Ok(CommandResult {
            exit_code: status.exit_code,
            signal: status.signal,
            output,
            truncated,
            timed_out,
            terminal_id: Some(self.id.clone()),
            // Hearth cannot confine what the client's terminal runs.
            sandbox: None,
        })
    }

    async fn poll_after(
        &self,
        delay: Duration,
        cancel: &CancellationToken,
    ) -> Result<Snapshot, IoError> {
        sleep(delay).await;
        let answer = self
            .call("terminal/output", cancel)
            .await
            .map_err(|e| failure("read the terminal output", e))?;
        Ok(Snapshot::parse(&answer))
    }

    async fn call(&self, method: &str, cancel: &CancellationToken) -> Result<Value, ClientError> {
        call(
            &self.client,
            method,
            json!({ "terminalId": self.id }),
            cancel,
        )
        .await
    }

    /// A call that must happen even when the turn was cancelled, bounded in time.
    async fn cleanup(&self, method: &str) -> Result<Value, IoError> {
        let own = CancellationToken::new();
        match timeout(CLEANUP_TIMEOUT, self.call(method, &own)).await {
            Ok(answer) => answer.map_err(|e| failure(&format!("finish the command ({method})"), e)),
            Err(_) => Err(IoError(format!("the editor did not answer {method}"))),
        }
    }

    async fn release(&mut self) {
        self.released = true;
        // Nothing more to do if the client fails to release: the id is no use to us anyway.
        let _ = self.cleanup("terminal/release").await;
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let client = self.client.clone();
        let params = json!({ "terminalId": self.id });
        runtime.spawn(async move {
            let own = CancellationToken::new();
            let _ = timeout(
                CLEANUP_TIMEOUT,
                call(&client, "terminal/release", params, &own),
            )
            .await;
        });
    }
}

/// The output for the result: the client's (already bounded to `outputByteLimit`, from the
/// end) with a marker when it dropped the start, and bounded again in case it did not honour
/// the limit.
fn kept_output(last: &Snapshot, limit: usize) -> (String, bool) {
    let mut kept = KeptOutput::new(limit);
    kept.push(last.output.as_bytes());
    let truncated = last.truncated || kept.truncated();
    let text = kept.finish();
    if last.truncated {
        (
            format!("… [earlier output dropped by the editor] …\n{text}"),
            truncated,
        )
    } else {
        (text, truncated)
    }
}

/// Tracks what was already forwarded, so each poll forwards only the new part — also when
/// the client dropped the start of its buffer between two polls.
#[derive(Default)]
struct Cursor {
    seen: String,
}

impl Cursor {
    fn advance(&mut self, output: &str) -> String {
        let new = match output.strip_prefix(self.seen.as_str()) {
            Some(rest) => rest,
            None => &output[self.overlap(output)..],
        };
        let new = new.to_owned();
        self.seen = output.to_owned();
        new
    }

    /// Where the new part of `output` starts when the window moved. Either the tail we
    /// forwarded last still appears in it (the new part follows its last occurrence), or only
    /// a short overlap is left (the longest end of `seen` that begins `output`), or nothing
    /// (all of it is new). In repetitive output this may skip some new text, which is better
    /// than sending old text twice.
    fn overlap(&self, output: &str) -> usize {
        let from = floor_char_boundary(&self.seen, self.seen.len().saturating_sub(ANCHOR_BYTES));
        let anchor = &self.seen[from..];
        if let Some(at) = output.rfind(anchor).filter(|_| !anchor.is_empty()) {
            return at + anchor.len();
        }
        let longest = anchor.len().min(output.len());
        (1..=longest)
            .rev()
            .find(|&k| output.is_char_boundary(k) && self.seen.ends_with(&output[..k]))
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::Cursor;

    #[test]
    fn cursor_forwards_appended_output() {
        let mut cursor = Cursor::default();
        assert_eq!(cursor.advance("a\n"), "a\n");
        assert_eq!(cursor.advance("a\nb\n"), "b\n");
        assert_eq!(cursor.advance("a\nb\n"), "");
    }

    #[test]
    fn cursor_follows_a_window_that_dropped_its_start() {
        let mut cursor = Cursor::default();
        assert_eq!(cursor.advance("one\ntwo\n"), "one\ntwo\n");
        assert_eq!(cursor.advance("two\nthree\n"), "three\n");
        assert_eq!(cursor.advance("four\nfive\n"), "four\nfive\n");
    }
}
