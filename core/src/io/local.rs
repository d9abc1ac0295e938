//! The local I/O backend: the file system through tokio, commands through `sh -c`, started by
//! the engine's launcher (their own process tree, no provider credentials, stdout and stderr
//! merged into one pipe so the interleaving is the one a terminal would show).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::io::AsyncReadExt;
use tokio::process::Child;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::{Instant, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

use super::output::{DeltaStream, KeptOutput, Utf8Chunks};
use super::process::{
    ChildKind, Group, Launcher, OutputReader, StartError, Started, Stdio, exit_parts, shell,
};
use super::{CommandResult, CommandSpec, Io, IoError, Meta, WalkEntry, WalkSpec};

/// Files larger than this are refused as text: no source file is this big, and reading a
/// multi-gigabyte log into memory to show the model 2000 lines of it would hurt the host.
const MAX_TEXT_FILE_BYTES: u64 = 32 * 1024 * 1024;
/// How long a timed-out command gets between SIGTERM and SIGKILL.
const TERMINATE_GRACE: Duration = Duration::from_secs(2);
/// How long the pipe is drained after the group was killed. A process that left the group
/// (`setsid`) may hold the pipe open forever; we stop listening to it.
const DRAIN_GRACE: Duration = Duration::from_millis(500);
const READ_CHUNK: usize = 64 * 1024;

/// The local backend; its commands start through `launcher`.
#[derive(Clone)]
pub struct LocalIo {
    launcher: Arc<Launcher>,
}

impl LocalIo {
    pub fn new(launcher: Arc<Launcher>) -> Self {
        LocalIo { launcher }
    }
}

impl Io for LocalIo {
    fn read_text<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, IoError>> {
        Box::pin(read_text(path))
    }

    fn read_bytes<'a>(
        &'a self,
        path: &'a Path,
        max: usize,
    ) -> BoxFuture<'a, Result<Vec<u8>, IoError>> {
        Box::pin(read_bytes(path, max))
    }

    fn write_text<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), IoError>> {
        Box::pin(write_text(path, content))
    }

    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<(), IoError>> {
        Box::pin(async move {
            match tokio::fs::remove_file(path).await {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(describe(e, path)),
                _ => Ok(()),
            }
        })
    }

    fn stat<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<Meta>, IoError>> {
        Box::pin(async move {
            match tokio::fs::metadata(path).await {
                Ok(meta) => Ok(Some(Meta {
                    is_dir: meta.is_dir(),
                })),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(describe(e, path)),
            }
        })
    }

    fn canonicalize(&self, path: &Path) -> PathBuf {
        super::canonical::resolve(path)
    }

    fn walk(
        &self,
        spec: &WalkSpec,
        cancel: &CancellationToken,
        visit: &mut dyn FnMut(WalkEntry) -> bool,
    ) -> Result<(), IoError> {
        super::walk::walk(spec, cancel, visit)
    }

    fn walk_parallel<'v>(
        &self,
        spec: &WalkSpec,
        cancel: &CancellationToken,
        visitor: &(dyn Fn() -> super::Visit<'v> + Sync),
    ) -> Result<(), IoError> {
        super::walk::walk_parallel(spec, cancel, visitor)
    }

    fn run_command<'a>(
        &'a self,
        spec: CommandSpec,
        output: UnboundedSender<String>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<CommandResult, IoError>> {
        Box::pin(run_command(&self.launcher, spec, output, cancel))
    }
}

/// The size of the regular file at `path`.
async fn file_size(path: &Path) -> Result<u64, IoError> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| describe(e, path))?;
    if meta.is_dir() {
        return Err(IoError(format!("{} is a directory", path.display())));
    }
    // A FIFO or a device would block the read forever or never end.
    if !meta.is_file() {
        return Err(IoError(format!("{} is not a regular file", path.display())));
    }
    Ok(meta.len())
}

async fn read_bytes(path: &Path, max: usize) -> Result<Vec<u8>, IoError> {
    file_size(path).await?;
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| describe(e, path))?;
    let mut bytes = Vec::new();
    file.take(max as u64)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| describe(e, path))?;
    Ok(bytes)
}

async fn read_text(path: &Path) -> Result<String, IoError> {
    let len = file_size(path).await?;
    if len > MAX_TEXT_FILE_BYTES {
        return Err(IoError(format!(
            "{} is too large to read as text ({} bytes; the limit is {MAX_TEXT_FILE_BYTES})",
            path.display(),
            len
        )));
    }
    let bytes = tokio::fs::read(path).await.map_err(|e| describe(e, path))?;
    if bytes.contains(&0) {
        return Err(IoError(format!(
            "{} is a binary file (it contains NUL bytes)",
            path.display()
        )));
    }
    String::from_utf8(bytes).map_err(|_| IoError(format!("{} is not UTF-8 text", path.display())))
}

async fn write_text(path: &Path, content: &str) -> Result<(), IoError> {
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| describe(e, parent))?;
    }
    tokio::fs::write(path, content)
        .await
        .map_err(|e| describe(e, path))
}

/// An `std::io::Error` as a message that names the path and reads well to a model.
fn describe(error: std::io::Error, path: &Path) -> IoError {
    match error.kind() {
        std::io::ErrorKind::NotFound => IoError(format!("{} does not exist", path.display())),
        std::io::ErrorKind::PermissionDenied => {
            IoError(format!("permission denied: {}", path.display()))
        }
        _ => IoError(format!("{}: {error}", path.display())),
    }
}

/// A started command: the child, its tree, its merged output, its sandbox backend.
type Spawned = (Child, Group, OutputReader, Option<String>);

/// Why the first phase of a command ended.
enum Ending {
    Exited(std::process::ExitStatus),
    TimedOut,
    Cancelled,
}

async fn run_command(
    launcher: &Launcher,
    spec: CommandSpec,
    output: UnboundedSender<String>,
    cancel: CancellationToken,
) -> Result<CommandResult, IoError> {
    let (mut child, group, mut reader, sandbox) = spawn(launcher, &spec)?;
    let mut sink = OutputSink::new(&spec, output);
    let deadline = Instant::now() + spec.timeout;

    let ending = loop {
        tokio::select! {
            biased;
            _ = cancel.cancelled() => break Ending::Cancelled,
            status = child.wait() => break Ending::Exited(status.map_err(wait_failed)?),
            _ = sleep_until(deadline) => break Ending::TimedOut,
            // End of file only means every writer closed the pipe; the command may go on.
            _ = sink.read_from(&mut reader), if !sink.eof => {}
        }
    };
    let status = match ending {
        Ending::Exited(status) => Some(status),
        Ending::Cancelled => None,
        Ending::TimedOut => {
            group.terminate();
            timeout(TERMINATE_GRACE, child.wait())
                .await
                .ok()
                .and_then(Result::ok)
        }
    };
    // Whatever the shell left behind (background jobs, a hung pipeline) goes with it.
    group.kill();
    let status = match status {
        Some(status) => Some(status),
        None => child.wait().await.ok(),
    };
    let _ = timeout(DRAIN_GRACE, sink.read_from(&mut reader)).await;

    let (exit_code, signal) = status.map(exit_parts).unwrap_or_default();
    let (output, truncated) = sink.finish();
    Ok(CommandResult {
        exit_code,
        signal,
        output,
        truncated,
        timed_out: matches!(ending, Ending::TimedOut),
        terminal_id: None,
        sandbox,
    })
}

fn wait_failed(error: std::io::Error) -> IoError {
    IoError(format!("waiting for the command failed: {error}"))
}

/// Starts `command` in the OS's shell (`sh -c` on Unix) as the leader of a new process tree,
/// both output streams on one pipe, no stdin (a command waiting for input would hang until
/// its timeout), in its sandbox; the backend that confines it.
fn spawn(launcher: &Launcher, spec: &CommandSpec) -> Result<Spawned, IoError> {
    let shell = shell();
    let args = shell.args(&spec.command);
    let mut launch = launcher.launch(ChildKind::Command, shell.program, &args, &spec.cwd, &[]);
    launch.sandbox = spec.sandbox.clone();
    let cannot = |reason: &dyn std::fmt::Display| {
        IoError(format!("cannot start `{}`: {reason}", spec.command))
    };
    match launcher.start(launch, Stdio::Merged) {
        Ok(Started {
            child,
            group,
            output: Some(output),
            sandbox,
        }) => Ok((child, group, output, sandbox)),
        Ok(_) => Err(cannot(&"its output pipe was not set up")),
        Err(StartError::Refused(reason)) => Err(cannot(&reason)),
        Err(StartError::Io(_)) if !spec.cwd.is_dir() => Err(IoError(format!(
            "the working directory {} does not exist",
            spec.cwd.display()
        ))),
        Err(StartError::Io(e)) => Err(cannot(&e)),
    }
}

/// Where a command's bytes go: decoded into the live stream and kept for the result.
struct OutputSink {
    kept: KeptOutput,
    stream: DeltaStream,
    decoder: Utf8Chunks,
    eof: bool,
}

impl OutputSink {
    fn new(spec: &CommandSpec, output: UnboundedSender<String>) -> Self {
        OutputSink {
            kept: KeptOutput::new(spec.output_limit),
            stream: DeltaStream::new(
                output,
                spec.output_limit
                    .saturating_mul(super::output::STREAM_CAP_FACTOR),
            ),
            decoder: Utf8Chunks::default(),
            eof: false,
        }
    }

    /// Reads until end of file (all writers gone). Cancel-safe: a read that is interrupted
    /// loses nothing.
    async fn read_from(&mut self, reader: &mut OutputReader) {
        let mut buf = vec![0; READ_CHUNK];
        while !self.eof {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => self.eof = true,
                Ok(n) => {
                    self.kept.push(&buf[..n]);
                    self.stream.send(&self.decoder.decode(&buf[..n]));
                }
            }
        }
    }

    fn finish(mut self) -> (String, bool) {
        let rest = std::mem::take(&mut self.decoder).finish();
        self.stream.send(&rest);
        let truncated = self.kept.truncated();
        (self.kept.finish(), truncated)
    }
}

#[cfg(test)]
mod tests;
