//! The termination signals of the `hearth` command, through tokio's signal handling rather
//! than the `ctrlc` crate: on macOS `ctrlc` links objc and Foundation, which a cross link
//! (zig ships no frameworks) can't supply and which the engine needs nothing else from.

use std::io;

use tokio::runtime::{Builder, Runtime};

/// Calls `handler` each time the process is asked to stop — Ctrl-C, and SIGTERM/SIGHUP on
/// Unix; Ctrl-Break, console close and system shutdown on Windows — on a thread of its own.
/// The listeners are installed before this returns, so a signal right after is not missed.
pub fn on_termination(handler: impl Fn() + Send + 'static) -> io::Result<()> {
    // A runtime of its own: the engine's runtime is internal to hearth-core.
    let runtime = Builder::new_current_thread().enable_io().build()?;
    let mut signals = listen(&runtime)?;
    std::thread::Builder::new()
        .name("hearth-signals".into())
        .spawn(move || {
            // The handler runs outside block_on: it may close the engine, whose own runtime
            // can't be dropped inside an async context.
            while runtime.block_on(signals.next()) {
                handler();
            }
        })?;
    Ok(())
}

fn listen(runtime: &Runtime) -> io::Result<Signals> {
    // tokio registers a signal only from inside a runtime.
    let _entered = runtime.enter();
    Signals::listen()
}

#[cfg(unix)]
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn listen() -> io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Waits for the next signal; false once none can come any more.
    async fn next(&mut self) -> bool {
        tokio::select! {
            got = self.interrupt.recv() => got.is_some(),
            got = self.terminate.recv() => got.is_some(),
            got = self.hangup.recv() => got.is_some(),
        }
    }
}

#[cfg(windows)]
struct Signals {
    interrupt: tokio::signal::windows::CtrlC,
    brk: tokio::signal::windows::CtrlBreak,
    close: tokio::signal::windows::CtrlClose,
    shutdown: tokio::signal::windows::CtrlShutdown,
}

#[cfg(windows)]
impl Signals {
    fn listen() -> io::Result<Self> {
        use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
        Ok(Self {
            interrupt: ctrl_c()?,
            brk: ctrl_break()?,
            close: ctrl_close()?,
            shutdown: ctrl_shutdown()?,
        })
    }

    /// Waits for the next console event; false once none can come any more.
    async fn next(&mut self) -> bool {
        tokio::select! {
            got = self.interrupt.recv() => got.is_some(),
            got = self.brk.recv() => got.is_some(),
            got = self.close.recv() => got.is_some(),
            got = self.shutdown.recv() => got.is_some(),
        }
    }
}
