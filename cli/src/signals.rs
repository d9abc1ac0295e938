//! The termination signals of the `hearth` command, through tokio's signal handling rather
//! than the `ctrlc` crate: on macOS `ctrlc` links objc and Foundation, which a cross link
//! (zig ships no frameworks) can't supply and which the engine needs nothing else from.

use std::io;

use tokio::runtime::{Builder, Runtime};

/// Holds the Unix termination signals back on this thread (and the threads it starts) until
/// `on_termination` installs their listeners: `hearth acp` answers a first frame already
/// waiting before it installs them, and a signal that comes meanwhile must end it as cleanly
/// as a later one, not as its default does (killed outright). Held back, it waits, and
/// reaches the listeners as soon as they are installed. (Children do not inherit it: std's
/// `Command` clears the mask in each child.)
#[cfg(unix)]
pub fn hold() {
    use nix::sys::signal::{SigmaskHow, pthread_sigmask};
    if let Err(e) = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&termination()), None) {
        tracing::warn!(error = %e, "cannot hold the termination signals back");
    }
}

/// Windows's console events have no mask; one that comes before the listeners ends the
/// process as it would any other.
#[cfg(not(unix))]
pub fn hold() {}

/// Lets what `hold` held back through, to the listeners now installed.
#[cfg(unix)]
fn release() -> io::Result<()> {
    use nix::sys::signal::{SigmaskHow, pthread_sigmask};
    pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&termination()), None)?;
    Ok(())
}

#[cfg(not(unix))]
fn release() -> io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn termination() -> nix::sys::signal::SigSet {
    use nix::sys::signal::{SigSet, Signal};
    [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP]
        .into_iter()
        .collect::<SigSet>()
}

/// Calls `handler` each time the process is asked to stop — Ctrl-C, and SIGTERM/SIGHUP on
/// Unix; Ctrl-Break, console close and system shutdown on Windows — on a thread of its own.
/// The listeners are installed before this returns, so a signal right after is not missed,
/// nor one `hold` held back — which goes on even if they could not be installed, to do what
/// it does by default.
pub fn on_termination(handler: impl Fn() + Send + 'static) -> io::Result<()> {
    let installed = listen_on_a_thread(handler);
    release()?;
    installed
}

fn listen_on_a_thread(handler: impl Fn() + Send + 'static) -> io::Result<()> {
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
