//! A session's checkpoints in the store: recorded as the agent's tools change files, read
//! back and marked undone by `/undo` and rewind (`agent/undo.rs`, `agent/rewind.rs`).

use std::path::Path;

use super::Session;
use super::events::Recorded;
use crate::store::{
    CheckpointOp, CheckpointRecord, CheckpointRow, Event, StoreError, StoreOp, now,
};

impl Session {
    /// Records `path` as the prompt `message_id` found it before changing it: its text, or
    /// `None` when it did not exist. Only the prompt's first record of a path is kept.
    pub fn record_checkpoint(
        &self,
        message_id: &str,
        path: &Path,
        content: Option<String>,
        content_hash: Option<String>,
    ) {
        self.ctx.write(StoreOp::Checkpoint(CheckpointOp::Record(
            CheckpointRecord {
                session_id: self.id.clone(),
                message_id: message_id.to_string(),
                path: path.to_string_lossy().into_owned(),
                content,
                content_hash,
                created_at: now(),
            },
        )));
    }

    /// Forgets the record of `path` a change that failed made (`content_hash`: what it found),
    /// when it was the prompt's first and nothing changed the file since.
    pub fn withdraw_checkpoint(&self, message_id: &str, path: &Path, content_hash: Option<String>) {
        self.ctx.write(StoreOp::Checkpoint(CheckpointOp::Withdraw {
            session_id: self.id.clone(),
            message_id: message_id.to_string(),
            path: path.to_string_lossy().into_owned(),
            content_hash,
        }));
    }

    /// Records what the prompt's latest change to `path` left (`None`: no file).
    pub fn record_checkpoint_after(
        &self,
        message_id: &str,
        path: &Path,
        after_hash: Option<String>,
    ) {
        self.ctx.write(StoreOp::Checkpoint(CheckpointOp::After {
            session_id: self.id.clone(),
            message_id: message_id.to_string(),
            path: path.to_string_lossy().into_owned(),
            after_hash,
        }));
    }

    /// The session's checkpoints, oldest first, once every queued write is committed.
    pub async fn checkpoints(&self) -> Result<Vec<CheckpointRow>, StoreError> {
        let id = self.id.clone();
        self.ctx.read(move |rows| rows.checkpoints(&id)).await
    }

    /// Marks checkpoints as dealt with by an undo or a rewind, so the next one goes further
    /// back.
    pub fn mark_undone(&self, ids: Vec<i64>) {
        if ids.is_empty() {
            return;
        }
        self.ctx.write(StoreOp::Checkpoint(CheckpointOp::Undone {
            session_id: self.id.clone(),
            ids,
        }));
    }

    /// The user message ids of the session's prompts, oldest first (what a rewind names).
    pub async fn prompt_ids(&self) -> Result<Vec<String>, StoreError> {
        let format = self.ctx.log();
        let mut ids: Vec<String> = Vec::new();
        let mut note = |event: Event| {
            let Some(update) = &event.update else {
                return;
            };
            let message_id = match format.decode(update) {
                Recorded::UserPart { message_id, .. } | Recorded::Command { message_id } => {
                    message_id
                }
                _ => None,
            };
            // A prompt of several blocks is one prompt.
            if let Some(message_id) = message_id
                && ids.last() != Some(&message_id)
            {
                ids.push(message_id);
            }
        };
        self.ctx.for_each_context_event(&self.id, &mut note).await?;
        Ok(ids)
    }
}
