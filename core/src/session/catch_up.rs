//! What other processes did to a live session. Several engines may share a data dir (two
//! editors, each with its own `hearth acp`), and a session may be live in more than one: the
//! store is shared, each live session's state and model context are the engine's own. A
//! `session/load` or `session/resume` of a session already live here first catches it up,
//! so that what the model is sent next is what the log holds, as after a restart:
//!
//! - if another process committed anything since the session last read the store (the
//!   store's foreign version, `Store::foreign_version`: one `PRAGMA data_version`, which this
//!   engine's own commits never move) and no turn of this engine is running on it, its state,
//!   context and running cost are read back from the row and the log, as a restore reads
//!   them;
//! - if a turn another engine runs was left alone when it was last read, or the store moved,
//!   its interrupted turns are looked for again (`recovery.rs`): that engine may be gone now.
//!
//! With one process on the data dir the version never moves: a load costs one statement
//! more. The catch-up and the session's turns exclude each other (the turn queue's
//! [`Synced`] lock), so a turn never sees its context replaced under it; a load while a turn
//! of this engine runs leaves the session as it is, to be caught up at a later load.

use super::Session;
use super::SessionState;
use super::history::History;
use super::recovery::{self, RecordedTurns};
use crate::context::EngineContext;
use crate::store::StoreError;

/// Where a live session stands with the store.
#[derive(Debug, Default)]
pub struct Synced {
    /// The store's foreign version when the session last read it; `None` for a session made
    /// here, never read back.
    pub version: Option<i64>,
    /// A turn of the session was running in a live engine then, and was left alone.
    pub waiting: bool,
}

/// The row of session `id` as its state, and the turns recorded on it; `None` if it is not
/// stored.
pub async fn read_row(
    ctx: &EngineContext,
    id: &str,
) -> Result<Option<(SessionState, RecordedTurns)>, StoreError> {
    let read = ctx.read(|rows| Ok((rows.session(id)?, rows.running_turns(id)?)));
    let (Some(record), engines) = read.await? else {
        return Ok(None);
    };
    let turns = RecordedTurns {
        engines,
        orphaned: record.orphaned_turn,
    };
    Ok(Some((
        SessionState::from_record(&record, ctx.resolved()),
        turns,
    )))
}

/// The model's context of session `id` and what it has spent, read back from its log as a
/// session that comes up again continues them.
pub async fn read_context(ctx: &EngineContext, id: &str) -> Result<(History, f64), StoreError> {
    let mut history = History::default();
    ctx.for_each_context_event(id, |event| history.observe(&event, ctx.log()))
        .await?;
    let spent = ctx.read(|rows| rows.spent(id)).await?;
    Ok((history.restarted().logged(), spent.unwrap_or(0.0)))
}

/// Catches the session up with what other processes did since it last read the store (see
/// the module doc). The caller holds the turn queue's lock: no turn of this engine runs.
pub async fn catch_up(session: &Session, synced: &mut Synced) {
    let ctx = session.ctx();
    let version = match ctx.foreign_version() {
        Ok(version) => version,
        Err(e) => {
            tracing::error!(session = %session.id, error = %e, "cannot tell whether another process changed the session");
            return;
        }
    };
    let moved = synced.version != Some(version);
    if !moved && !synced.waiting {
        return;
    }
    let read = async {
        let Some((state, turns)) = read_row(ctx, &session.id).await? else {
            return Ok(None);
        };
        let context = if moved {
            Some(read_context(ctx, &session.id).await?)
        } else {
            None
        };
        Ok::<_, StoreError>(Some((state, turns, context)))
    };
    let (state, turns, context) = match read.await {
        Ok(Some(read)) => read,
        // Deleted by another process: a load replays its log (none); a restart finds it gone.
        Ok(None) => return,
        Err(e) => {
            tracing::error!(session = %session.id, error = %e, "cannot read the session back");
            return;
        }
    };
    synced.waiting = recovery::close_interrupted_turns(session, turns).await;
    if let Some((history, spent)) = context {
        session.take_stored(state, history, spent);
        synced.version = Some(version);
    }
}
