//! A session's prompt queue: one turn at a time, in arrival order. A prompt sent while a
//! turn runs waits its turn; a cancel resolves it as `cancelled` without running it.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use agent_client_protocol_schema::v1::{PromptRequest, PromptResponse, StopReason};
use futures::FutureExt;
use tokio::sync::{mpsc, oneshot};

use super::Session;
use super::registry::SessionHandle;
use crate::acp::call::Call;
use crate::engine::Shared;
use crate::rpc::RpcError;
use crate::store::StoreOp;

enum TurnJob {
    Prompt {
        request: Call,
        prompt: PromptRequest,
        epoch: u64,
    },
    Idle(oneshot::Sender<()>),
}

pub struct Turns {
    tx: mpsc::UnboundedSender<TurnJob>,
}

impl Turns {
    pub fn start(
        shared: &Arc<Shared>,
        handle: &Arc<SessionHandle>,
        session: &Arc<Session>,
    ) -> Turns {
        let (tx, rx) = mpsc::unbounded_channel();
        shared
            .runtime
            .spawn(run(shared.clone(), handle.clone(), session.clone(), rx));
        Turns { tx }
    }

    pub fn push(&self, request: Call, prompt: PromptRequest, epoch: u64) {
        // Fails only when the runtime is shutting down; the dropped Call answers -32800.
        let _ = self.tx.send(TurnJob::Prompt {
            request,
            prompt,
            epoch,
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
    shared: Arc<Shared>,
    handle: Arc<SessionHandle>,
    session: Arc<Session>,
    mut jobs: mpsc::UnboundedReceiver<TurnJob>,
) {
    while let Some(job) = jobs.recv().await {
        let (request, prompt, epoch) = match job {
            TurnJob::Idle(done) => {
                let _ = done.send(());
                continue;
            }
            TurnJob::Prompt {
                request,
                prompt,
                epoch,
            } => (request, prompt, epoch),
        };
        let token = request.token.clone();
        if !handle.start_turn(epoch, &token) {
            request.reply(Ok(PromptResponse::new(StopReason::Cancelled)));
            continue;
        }
        mark_running(&shared, &session, true);
        let turn = crate::agent::run_turn(&shared, &session, &token, prompt.prompt);
        let outcome = match AssertUnwindSafe(turn).catch_unwind().await {
            Ok(outcome) => outcome,
            Err(_) => {
                tracing::error!(session = %session.id, "a turn panicked");
                Err(RpcError::internal("the turn failed unexpectedly"))
            }
        };
        handle.end_turn();
        mark_running(&shared, &session, false);
        request.reply(outcome.map(PromptResponse::new));
    }
}

/// Keeps the row's `turn_running` flag, which tells a later restore whether this session was
/// interrupted mid-turn.
fn mark_running(shared: &Shared, session: &Session, running: bool) {
    let op = StoreOp::SetTurnRunning {
        session_id: session.id.clone(),
        running,
    };
    shared.outbox.write(op, None);
}
