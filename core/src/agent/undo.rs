//! `/undo`: puts back the files changed by the latest turn whose file changes are not undone
//! yet (each `/undo` goes one turn further back), reports what it did as an agent message —
//! logged, so a replay shows it — and tells the model, whose edits are gone. Only the
//! `write` and `edit` tools' changes are checkpointed (not `run_command`'s); the report says so.
//! The rows it put back are marked undone, so the next `/undo` starts before them.
//!
//! Tests: end to end in `core/tests/undo.rs`.

use std::path::PathBuf;
use std::sync::Arc;

use super::restore::{self, Outcome};
use super::{StopReason, TurnError};
use crate::chat::Message;
use crate::ids::new_id;
use crate::session::Session;
use crate::session::events::{EventSink, SessionEvent, Visibility};
use crate::session::notice::notify;
use crate::store::CheckpointRow;

/// What a report says of the changes no checkpoint covers.
pub const UNTRACKED: &str = "Changes made by commands the agent ran (`run_command`) are not \
    tracked, so they were not undone.";

pub async fn run(session: &Arc<Session>, sink: &dyn EventSink) -> Result<StopReason, TurnError> {
    let rows = session.checkpoints().await?;
    let left: Vec<&CheckpointRow> = rows.iter().rev().filter(|r| !r.undone).collect();
    let text = match left.first() {
        None => format!(
            "Nothing to undo: no file changes of the agent's `write` and `edit` tools are left \
             to put back in this session. {UNTRACKED}"
        ),
        Some(newest) => {
            let turn = newest.message_id.clone();
            let (of_turn, earlier): (Vec<&CheckpointRow>, Vec<&CheckpointRow>) =
                left.iter().partition(|r| r.message_id == turn);
            let io = restore::workspace(session);
            let outcome = restore::revert(&*io, &of_turn, false).await;
            session.mark_undone(of_turn.iter().map(|r| r.id).collect());
            let cwd = PathBuf::from(&session.state().cwd);
            let files = restore::describe(&outcome, &cwd);
            sink.remember(Message::user_text(format!(
                "The user ran /undo, which put back the files you changed in an earlier turn:\n\
                 {files}\nRead a file again before you edit it."
            )));
            if !outcome.conflicts.is_empty() {
                let description = format!(
                    "{} file(s) changed after the agent's edit were left as they are (see the \
                     report).",
                    outcome.conflicts.len()
                );
                notify(sink, "Undo left files alone", &description);
            }
            report(&outcome, &files, turns(&earlier))
        }
    };
    let message = SessionEvent::MessageChunk {
        message_id: new_id("msg"),
        text,
    };
    sink.emit(message, Visibility::Live);
    Ok(StopReason::EndTurn)
}

/// The number of turns these checkpoints belong to.
fn turns(rows: &[&CheckpointRow]) -> usize {
    let mut seen: Vec<&str> = rows.iter().map(|r| r.message_id.as_str()).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

fn report(outcome: &Outcome, files: &str, earlier: usize) -> String {
    let mut text = if outcome.restored.is_empty() && outcome.conflicts.is_empty() {
        "Undid the latest turn that changed files: they were already as they were before it."
            .to_string()
    } else {
        format!("Undid the file changes of the latest turn that made any:\n{files}")
    };
    text.push_str("\n\n");
    text.push_str(UNTRACKED);
    match earlier {
        0 => {}
        1 => text.push_str("\nOne earlier turn with file changes can still be undone."),
        n => text.push_str(&format!(
            "\n{n} earlier turns with file changes can still be undone."
        )),
    }
    text
}
