//! A session's prompt queue: one turn at a time, in arrival order. A prompt sent while a
//! turn runs waits its turn; a cancel resolves it as `cancelled` without running it. Each
//! prompt resolves, through the callback it came with, with how its turn ended — answering
//! the client is the protocol edge's. The callback runs here, before the next job, so a
//! turn's answer always precedes whatever is answered after it (a `close` waiting for it).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::Session;
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
}

impl Turns {
    pub fn start(handle: &Arc<SessionHandle>, session: &Arc<Session>) -> Turns {
        let (tx, rx) = mpsc::unbounded_channel();
        session
            .ctx()
            .runtime()
            .spawn(run(handle.clone(), session.clone(), rx));
        Turns { tx }
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
                let outcome = if handle.start_turn(epoch, &token) {
                    let outcome = turn(&session, &token, prompt).await;
                    handle.end_turn();
                    outcome
                } else {
                    Ok(TurnEnd::stopped(StopReason::Cancelled))
                };
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
