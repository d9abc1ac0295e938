//! One task per live session: a serial runner of the jobs the protocol edge schedules on it,
//! in arrival order. A job is work on the live session (`Job::Run`), or ending it
//! (`Job::End`: close or delete). Prompts go on to the session's turn queue, so a long turn
//! never holds up `load`, `close` or a config change.
//!
//! A session comes up new, or restored from the store (`restore`): its row, its model context
//! and its running cost read back, then the turns the store records as running on it closed
//! if their engine is gone (`recovery.rs`) — a turn another live process runs is left alone.
//! What another process writes to a session live here is taken in by its next `load` or
//! `resume` (`LiveSession::catch_up`, `catch_up.rs`).

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::catch_up::{self, Synced};
use super::history::History;
use super::project::Project;
use super::recovery::RecordedTurns;
use super::registry::SessionHandle;
use super::services::SessionServices;
use super::turns::{OnTurnEnd, TurnOutcome, Turns};
use super::{Session, SessionState};
use crate::chat::Prompt;
use crate::context::EngineContext;
use crate::lsp::Lsp;
use crate::store::{StoreError, StoreOp};
use crate::tools::Registry;

/// Why a job found no live session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// No session with this id is stored.
    NotFound,
    /// The store could not be read.
    Store(String),
}

/// Work to run on a live session (or be told why there is none).
pub type Work = Box<dyn FnOnce(Result<LiveSession, Unavailable>) -> BoxFuture<'static, ()> + Send>;

pub enum Job {
    Run {
        /// The session's cancel epoch when the job was queued (see `SessionHandle`).
        epoch: u64,
        work: Work,
    },
    /// Cancels the turns, waits for them, shuts the session's services down and unregisters
    /// it; `delete` also removes it from the store. `done` runs once that is queued, before
    /// the jobs queued after this one run elsewhere.
    End {
        delete: bool,
        done: Box<dyn FnOnce(Result<(), Unavailable>) + Send>,
    },
}

impl Job {
    /// Work to run on the session; the epoch is filled in when it is queued.
    pub fn run(
        work: impl FnOnce(Result<LiveSession, Unavailable>) -> BoxFuture<'static, ()> + Send + 'static,
    ) -> Job {
        Job::Run {
            epoch: 0,
            work: Box::new(work),
        }
    }
}

/// A live session, as a job sees it.
pub struct LiveSession {
    pub session: Arc<Session>,
    turns: Turns,
    epoch: u64,
}

impl LiveSession {
    /// Queues a prompt behind the running turn; `done` is told how the turn ended. A cancel
    /// sent after the prompt was queued ends it `cancelled` without running it.
    pub fn prompt(
        &self,
        prompt: Prompt,
        token: CancellationToken,
        done: impl FnOnce(TurnOutcome) + Send + 'static,
    ) {
        let done: OnTurnEnd = Box::new(done);
        self.turns.push(prompt, self.epoch, token, done);
    }

    /// Resolves once the turns queued before this call have ended: for work that must not
    /// overlap a turn (a rewind of the files a turn may still be changing).
    pub async fn after_turns(&self) {
        self.turns.idle().await;
    }

    /// Catches the session up with what other processes on the data dir did to it since it
    /// last read the store, unless a turn of this engine runs on it (`catch_up.rs`): for
    /// `session/load` and `session/resume`, before they answer.
    pub async fn catch_up(&self) {
        self.turns.catch_up(&self.session).await;
    }
}

pub async fn run(
    ctx: Arc<EngineContext>,
    handle: Arc<SessionHandle>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    initial: Option<SessionState>,
) {
    let restored = match initial {
        Some(state) => Restored::new(state),
        None => match restore(&ctx, &handle.id).await {
            Ok(Some(restored)) => restored,
            Ok(None) => return answer_rest(&ctx, &handle, jobs, Unavailable::NotFound).await,
            Err(e) => {
                tracing::error!(session = %handle.id, error = %e, "restoring a session failed");
                return answer_rest(&ctx, &handle, jobs, Unavailable::Store(e)).await;
            }
        },
    };
    // Read once, whichever way the session came up (new, load, resume, a restart): its
    // system prompt shows them for the session's life, its `task` tool its agent types.
    let Restored {
        state,
        history,
        turns: recorded,
        spent,
        version,
    } = restored;
    let project = Project::read(Path::new(&state.cwd), ctx.resolved());
    let delegates = ctx.config().subagent_limits().max_depth > 0;
    let agents = delegates.then(|| project.agents.clone());
    let tools = Registry::for_session(ctx.tool_deps(), agents);
    let lsp = Arc::new(Lsp::new(ctx.tool_deps().lsp.clone()));
    let services = Arc::new(SessionServices::new(handle.id.clone(), tools, lsp));
    handle.set_services(services.clone());
    let session = Arc::new(Session::new(
        handle.id.clone(),
        state,
        history,
        ctx.clone(),
        services,
        project,
    ));
    session.spend(spent);
    let waiting = super::recovery::close_interrupted_turns(&session, recorded).await;
    let turns = Turns::start(&handle, &session, Synced { version, waiting });
    while let Some(job) = jobs.recv().await {
        match job {
            Job::Run { epoch, work } => {
                let live = LiveSession {
                    session: session.clone(),
                    turns: turns.clone(),
                    epoch,
                };
                work(Ok(live)).await;
            }
            Job::End { delete, done } => {
                stop(&ctx, &handle, &session, &turns).await;
                if delete {
                    ctx.write(StoreOp::DeleteSession {
                        session_id: handle.id.clone(),
                    });
                }
                done(Ok(()));
                return reroute_rest(&ctx, &handle.id, jobs);
            }
        }
    }
}

/// A session as it comes up: new, or read back from the store.
struct Restored {
    state: SessionState,
    history: History,
    /// The turns the store records as running on it: interrupted ones are closed as it
    /// comes up.
    turns: RecordedTurns,
    /// What it had spent (its running cost goes on from there).
    spent: f64,
    /// The store's foreign version before it was read (`catch_up.rs`); `None` when new.
    version: Option<i64>,
}

impl Restored {
    fn new(state: SessionState) -> Self {
        Restored {
            state,
            history: History::default().logged(),
            turns: RecordedTurns::default(),
            spent: 0.0,
            version: None,
        }
    }
}

/// Reads the session's row, the model's context and what it spent from its log, once every
/// queued write is committed.
async fn restore(ctx: &Arc<EngineContext>, id: &Arc<str>) -> Result<Option<Restored>, String> {
    let message = |e: StoreError| e.0;
    // Before the reads: a commit of another process made during them moves it again.
    let version = ctx.foreign_version().map_err(message)?;
    let Some((state, turns)) = catch_up::read_row(ctx, id).await.map_err(message)? else {
        return Ok(None);
    };
    let (history, spent) = catch_up::read_context(ctx, id).await.map_err(message)?;
    Ok(Some(Restored {
        state,
        history,
        turns,
        spent,
        version: Some(version),
    }))
}

/// Cancels the running and queued turns, waits until each has answered, releases the
/// session's services and unregisters it, so that later requests start afresh.
async fn stop(ctx: &EngineContext, handle: &Arc<SessionHandle>, session: &Session, turns: &Turns) {
    handle.cancel();
    turns.idle().await;
    session.services().shutdown();
    ctx.sessions().remove(handle);
}

/// Jobs that were queued behind an end belong to the next incarnation of the session: route
/// them again (they restore it, or find it deleted).
fn reroute_rest(ctx: &Arc<EngineContext>, id: &str, mut jobs: mpsc::UnboundedReceiver<Job>) {
    jobs.close();
    while let Ok(job) = jobs.try_recv() {
        super::registry::route(ctx, id, job);
    }
}

/// The session could not be brought up: unregister it and tell every queued job why.
async fn answer_rest(
    ctx: &EngineContext,
    handle: &Arc<SessionHandle>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    why: Unavailable,
) {
    ctx.sessions().remove(handle);
    jobs.close();
    while let Ok(job) = jobs.try_recv() {
        match job {
            Job::Run { work, .. } => work(Err(why.clone())).await,
            Job::End { done, .. } => done(Err(why.clone())),
        }
    }
}
