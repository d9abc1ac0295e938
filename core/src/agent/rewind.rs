//! Rewinding a session's files (not its conversation) to before one of its prompts: every
//! later turn's file changes are undone, newest first, as `/undo` undoes one turn. A dry run
//! says what would happen and touches nothing (`dryRun`). The prompts' order is the log's
//! (`Session::prompt_ids`); the ACP method is `_hearth/session/rewind` (`acp/rewind.rs`), run
//! after the turns queued before it.
//!
//! Tests: end to end in `core/tests/undo.rs`.

use std::path::PathBuf;
use std::sync::Arc;

use super::restore::{self, Outcome};
use crate::chat::Message;
use crate::session::Session;
use crate::session::events::EventSink;
use crate::store::{CheckpointRow, StoreError};

#[derive(Debug)]
pub enum RewindError {
    /// No prompt of the session has this message id.
    UnknownMessage,
    Store(StoreError),
}

impl From<StoreError> for RewindError {
    fn from(e: StoreError) -> Self {
        RewindError::Store(e)
    }
}

/// What a rewind did (or, dry, would do).
#[derive(Debug)]
pub struct Rewound {
    /// Whether files were touched (never on a dry run).
    pub rewound: bool,
    pub outcome: Outcome,
}

/// Undoes the file changes of the prompt `to_message_id` and of every later one. Call it
/// when no turn runs (a running turn would go on changing files).
pub async fn rewind(
    session: &Arc<Session>,
    to_message_id: &str,
    dry_run: bool,
) -> Result<Rewound, RewindError> {
    let prompts = session.prompt_ids().await?;
    let from = prompts
        .iter()
        .position(|id| id == to_message_id)
        .ok_or(RewindError::UnknownMessage)?;
    let later = &prompts[from..];
    let rows = session.checkpoints().await?;
    let undo: Vec<&CheckpointRow> = rows
        .iter()
        .rev()
        .filter(|r| !r.undone && later.contains(&r.message_id))
        .collect();
    let io = restore::workspace(session);
    let outcome = restore::revert(&*io, &undo, dry_run).await;
    if dry_run {
        return Ok(Rewound {
            rewound: false,
            outcome,
        });
    }
    session.mark_undone(undo.iter().map(|r| r.id).collect());
    if !(outcome.restored.is_empty() && outcome.conflicts.is_empty()) {
        let cwd = PathBuf::from(&session.state().cwd);
        let files = restore::describe(&outcome, &cwd);
        session.remember(Message::user_text(format!(
            "The user rewound the files to before an earlier prompt, which put back files \
             you changed:\n{files}\nRead a file again before you edit it."
        )));
    }
    Ok(Rewound {
        rewound: true,
        outcome,
    })
}
