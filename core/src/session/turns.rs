//! A session's prompt queue: one turn at a time, in arrival order. A prompt sent while a
//! turn runs waits its turn; a cancel resolves it as `cancelled` without running it. Each
//! prompt resolves, through the callback it came with, with how its turn ended — answering
//! the client is the protocol edge's. The callback runs here, before the next job, so a
//! turn's answer always precedes whatever is answered after it (a `close` waiting for it).
//!
//! A turn holds the queue's [`Synced`] lock while it runs, and a catch-up with what other
//! processes did to the session (`catch_up.rs`) runs only when it can take it: the one never
//! replaces the context under the other.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::Session;
use super::catch_up::{Synced, catch_up};
use super::registry::SessionHandle;
use crate::agent::{StopReason, TurnEnd, TurnError};
use crate::chat::Prompt;

pub type TurnOutcome = Result<TurnEnd, TurnError>;

/// Told how a turn ended. Dropped unrun only when the engine shuts down.
pub type OnTurnEnd = Box<dyn FnOnce(TurnOutcome) + Send>;

enum TurnJob {
    Prompt {
        prompt: Prompt,
        epoch: u64,
        token: CancellationToken,
        done: OnTurnEnd,
    },
    Idle(oneshot::Sender<()>),
}

#[derive(Clone)]
pub struct Turns {
    tx: mpsc::UnboundedSender<TurnJob>,
    /// Where the session stands with the store; held by the running turn.
    synced: Arc<Mutex<Synced>>,
}

impl Turns {
    pub fn start(handle: &Arc<SessionHandle>, session: &Arc<Session>, synced: Synced) -> Turns {
        let (tx, rx) = mpsc::unbounded_channel();
        let synced = Arc::new(Mutex::new(synced));
        let runner = run(handle.clone(), session.clone(), rx, synced.clone());
        session.ctx().runtime().spawn(runner);
        Turns { tx, synced }
    }

    /// Catches `session` up with the store (`catch_up.rs`), unless a turn is running.
    pub async fn catch_up(&self, session: &Session) {
        if let Ok(mut synced) = self.synced.try_lock() {
            catch_up(session, &mut synced).await;
        }
    }

    /// Queues a prompt; `token` cancels its turn. If the runtime is shutting down the job is
    /// dropped, and `done` with it.
    pub fn push(&self, prompt: Prompt, epoch: u64, token: CancellationToken, done: OnTurnEnd) {
        let _ = self.tx.send(TurnJob::Prompt {
            prompt,
            epoch,
            token,
            done,
        });
    }

    /// Resolves once every prompt queued before this call has been answered.
    pub async fn idle(&self) {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(TurnJob::Idle(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

async fn run(
    handle: Arc<SessionHandle>,
    session: Arc<Session>,
    mut jobs: mpsc::UnboundedReceiver<TurnJob>,
    synced: Arc<Mutex<Synced>>,
) {
    while let Some(job) = jobs.recv().await {
        match job {
            TurnJob::Idle(done) => {
                let _ = done.send(());
            }
            TurnJob::Prompt {
                prompt,
                epoch,
                token,
                done,
            } => {
                let running = synced.lock().await;
                let outcome = if handle.start_turn(epoch, &token) {
                    let outcome = turn(&session, &token, prompt).await;
                    handle.end_turn();
                    outcome
                } else {
                    Ok(TurnEnd::stopped(StopReason::Cancelled))
                };
                drop(running);
                done(outcome);
            }
        }
    }
}

/// Runs one turn with the session as its sink, flagged as running in the store meanwhile.
async fn turn(session: &Arc<Session>, token: &CancellationToken, prompt: Prompt) -> TurnOutcome {
    session.mark_running(true);
    session.steering().begin();
    let turn = crate::agent::run_turn(session, &**session, token, prompt);
    let outcome = match AssertUnwindSafe(turn).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(_) => {
            tracing::error!(session = %session.id, "a turn panicked");
            Err(TurnError::Internal("the turn failed unexpectedly".into()))
        }
    };
    // Steered messages the turn did not get to send (it was cancelled, or failed) join the
    // context now, so the next prompt carries them.
    for steered in session.steering().end() {
        crate::agent::log_steered(session, &**session, steered);
    }
    session.mark_running(false);
    outcome
}
