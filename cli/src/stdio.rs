//! The stdio host: a thin loop between stdin/stdout and the engine.

use std::io::{self, BufRead, BufWriter, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use hearth_core::{Config, Engine, Host};

use crate::credentials::{self, SignIn};

/// Writes each frame as one line and flushes, so the client sees it at once.
struct StdoutHost {
    out: Mutex<BufWriter<io::Stdout>>,
    /// Set until the engine has started its delivery thread (`serve`).
    starting: AtomicBool,
}

impl Host for StdoutHost {
    /// Taken only before the engine starts: the first answer, which has no delivery thread
    /// to wait for. After, answers go through the delivery thread like every other frame,
    /// and the reading thread only reads — blocked writing to a client that is not reading,
    /// it would stop reading a client that may itself be blocked writing to us.
    fn deliver_here(&self, frame: &str) -> bool {
        let taken = self.starting.load(Ordering::Acquire);
        if taken {
            self.deliver(frame);
        }
        taken
    }

    fn deliver(&self, frame: &str) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let written = out
            .write_all(frame.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot write to stdout");
        }
    }
}

/// Serves until stdin ends. The engine answers the first frame (the client's `initialize`)
/// before its store, runtime and threads start, and the signal listeners are installed after
/// it; a termination signal that comes first is held back until then (`signals::hold`). A
/// store that cannot be opened ends the process right after that first answer.
pub fn serve(config: Config, sign_in: SignIn) -> Result<(), String> {
    let host = Arc::new(StdoutHost {
        out: Mutex::new(BufWriter::new(io::stdout())),
        starting: AtomicBool::new(true),
    });
    crate::signals::hold();
    let engine = Engine::prepare_with(config, host.clone(), credentials::ports(sign_in));
    let engine = Arc::new(engine.map_err(|e| e.to_string())?);
    let mut stdin = io::stdin().lock();
    let mut line = Vec::new();
    // The start waits for the first frame only if that frame is already there, as when an
    // editor writes `initialize` right after spawning the agent: waiting for one with the
    // signals held back would leave an idle agent deaf to them.
    let mut started = !input_waiting();
    if started {
        start(&engine, &host)?;
    }
    loop {
        line.clear();
        // At most one byte past the cap is read, so a newline-less flood can't exhaust memory.
        match (&mut stdin)
            .take(MAX_FRAME_BYTES + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) => break,
            Ok(_) if line.len() as u64 > MAX_FRAME_BYTES => {
                tracing::error!(
                    limit = MAX_FRAME_BYTES,
                    "dropping a frame larger than the limit"
                );
                if skip_line(&mut stdin).is_err() {
                    break;
                }
            }
            Ok(_) => {
                let frame = trim_line_end(&line);
                if frame.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if engine.send_bytes(frame).is_err() {
                    break;
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read stdin");
                break;
            }
        }
        if !started {
            started = true;
            start(&engine, &host)?;
        }
    }
    engine.close().map_err(|e| e.to_string())
}

/// What the first frame's answer did not wait for: the signal listeners, then the engine's
/// store, runtime and delivery thread. On an error the engine is closed: the process ends.
fn start(engine: &Arc<Engine>, host: &StdoutHost) -> Result<(), String> {
    close_on_signals(engine.clone());
    let ready = engine.ready().map_err(|e| e.to_string());
    host.starting.store(false, Ordering::Release);
    if ready.is_err() {
        let _ = engine.close();
    }
    ready
}

/// Whether stdin has something to read now (Unix: `poll`, not waiting; end of input counts).
/// Elsewhere assumed: no signal is held back there (`signals::hold`), so the start may wait
/// for the first frame.
#[cfg(unix)]
fn input_waiting() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    poll(&mut fds, PollTimeout::ZERO).is_ok_and(|ready| ready > 0)
}

#[cfg(not(unix))]
fn input_waiting() -> bool {
    true
}

/// An editor that kills its agent (SIGTERM, SIGHUP, Ctrl-C) must not leave command trees
/// running: close the engine — which kills them — before exiting.
fn close_on_signals(engine: Arc<Engine>) {
    let installed = crate::signals::on_termination(move || {
        if let Err(e) = engine.close() {
            tracing::error!(error = %e, "closing on a signal failed");
        }
        std::process::exit(0);
    });
    if let Err(e) = installed {
        tracing::warn!(error = %e, "cannot handle termination signals");
    }
}

/// The largest frame `hearth acp` reads (the official TS SDK's own cap is 32 MiB).
const MAX_FRAME_BYTES: u64 = 256 * 1024 * 1024;

/// Discards the rest of an oversized line.
fn skip_line(input: &mut impl BufRead) -> io::Result<()> {
    loop {
        let (done, used) = {
            let buffer = input.fill_buf()?;
            match buffer.iter().position(|b| *b == b'\n') {
                Some(at) => (true, at + 1),
                None => (buffer.is_empty(), buffer.len()),
            }
        };
        input.consume(used);
        if done {
            return Ok(());
        }
    }
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
