//! What other processes did to a live session. Several engines may share a data dir (two
//! editors, each with its own `hearth acp`), and a session may be live in more than one. A
//! turn another engine runs on it is left alone while that engine lives (`recovery.rs`); a
//! `session/load` or `session/resume` of the session reads the turns recorded on it again
//! (one indexed read), since their engine may be gone now, and closes those that are
//! interrupted. The catch-up and the session's turns exclude each other (the turn queue's
//! [`Synced`] lock).

use super::Session;
use super::SessionState;
use super::history::History;
use super::recovery::{self, RecordedTurns};
use crate::context::EngineContext;
use crate::store::StoreError;

/// Where a live session stands with the store.
#[derive(Debug, Default)]
pub struct Synced {}

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
pub async fn catch_up(session: &Session, _synced: &mut Synced) {
    let turns = match read_row(session.ctx(), &session.id).await {
        Ok(Some((_, turns))) => turns,
        // Deleted by another process: a load replays its log (none); a restart finds it gone.
        Ok(None) => return,
        Err(e) => {
            tracing::error!(session = %session.id, error = %e, "cannot read the session back");
            return;
        }
    };
    recovery::close_interrupted_turns(session, turns).await;
}
