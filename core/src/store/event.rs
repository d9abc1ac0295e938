//! One entry of a session's append-only log.
//!
//! `update` is the `session/update` payload exactly as the client saw it (replayed verbatim
//! by `session/load`); `model` is what only the model needs (absent for most events). The
//! model's context and the replay are both derived from these rows: one source of truth.

use serde_json::Value;
use serde_json::value::RawValue;

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub update: Option<Value>,
    pub model: Option<Value>,
}

/// Streamed kinds whose text deltas belong together. The user's prompt blocks are separate
/// blocks (text, links, resources) and stay apart.
const CHUNK_KINDS: [&str; 2] = ["agent_message_chunk", "agent_thought_chunk"];

impl Event {
    pub fn update(update: Value) -> Self {
        Event {
            update: Some(update),
            model: None,
        }
    }

    /// The `sessionUpdate` tag, or `model` for model-only entries.
    pub fn kind(&self) -> &str {
        self.update.as_ref().and_then(tag).unwrap_or("model")
    }
}

/// A log entry that can absorb the one after it, as a streamed message's chunks do.
pub trait Merge {
    /// Folds `next` into `self` if it belongs there. Returns whether it did.
    fn try_merge(&mut self, next: &Self) -> bool;
}

impl Merge for Event {
    /// Folds `next` into `self` when both are text chunks of the same message, so a streamed
    /// message costs one row and replays as one chunk.
    fn try_merge(&mut self, next: &Event) -> bool {
        if self.model.is_some() || next.model.is_some() {
            return false;
        }
        match (self.update.as_mut(), next.update.as_ref()) {
            (Some(mine), Some(theirs)) => merge_chunk(mine, theirs),
            _ => false,
        }
    }
}

/// Whether updates of this kind (also the `events.kind` column) may fold together.
fn is_chunk(kind: &str) -> bool {
    CHUNK_KINDS.contains(&kind)
}

fn tag(update: &Value) -> Option<&str> {
    update.get("sessionUpdate").and_then(Value::as_str)
}

/// Appends the text of `theirs` to `mine` when both are text chunks of one kind and one
/// message. Returns whether it did.
fn merge_chunk(mine: &mut Value, theirs: &Value) -> bool {
    let kind = tag(mine).filter(|k| is_chunk(k));
    if kind.is_none() || kind != tag(theirs) {
        return false;
    }
    let message_id = |u: &Value| u.get("messageId").cloned();
    if message_id(mine).is_none() || message_id(mine) != message_id(theirs) {
        return false;
    }
    let Some(extra) = theirs
        .get("content")
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|c| c.get("text"))
        .and_then(Value::as_str)
    else {
        return false;
    };
    let Some(Value::String(text)) = mine
        .get_mut("content")
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .and_then(|c| c.get_mut("text"))
    else {
        return false;
    };
    text.push_str(extra);
    true
}

/// A row of the log as `session/load` reads it. Replay sends updates as they were stored,
/// so only chunks, which may fold together, are parsed.
pub enum Stored {
    /// An update to send verbatim: the JSON text the client first saw.
    Text(Box<RawValue>),
    /// A text chunk, parsed so that the next chunks of its message can fold into it.
    Chunk(Value),
    /// A row the client never sees (model-only, or unreadable). It still ends a run of
    /// chunks, as it does when the log is read as [`Event`]s.
    Hidden,
}

impl Stored {
    /// Reads a row from its `kind` column, its update's JSON text, and whether it also
    /// carries something for the model (which keeps it apart, as it keeps an [`Event`]).
    pub fn read(kind: &str, update: Option<&str>, for_model: bool) -> Stored {
        match update {
            None => Stored::Hidden,
            Some(text) if is_chunk(kind) && !for_model => {
                serde_json::from_str(text).map_or(Stored::Hidden, Stored::Chunk)
            }
            Some(text) => serde_json::from_str::<&RawValue>(text)
                .map_or(Stored::Hidden, |raw| Stored::Text(raw.to_owned())),
        }
    }

    /// The update to replay, if the client sees one.
    pub fn into_update(self) -> Option<Box<RawValue>> {
        match self {
            Stored::Text(raw) => Some(raw),
            Stored::Chunk(update) => serde_json::value::to_raw_value(&update).ok(),
            Stored::Hidden => None,
        }
    }
}

impl Merge for Stored {
    fn try_merge(&mut self, next: &Stored) -> bool {
        match (self, next) {
            (Stored::Chunk(mine), Stored::Chunk(theirs)) => merge_chunk(mine, theirs),
            _ => false,
        }
    }
}

/// Merges adjacent chunks of the same message in place.
pub fn coalesce<T: Merge>(entries: Vec<T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(entries.len());
    let mut fold = Fold::default();
    for entry in entries {
        out.extend(fold.push(entry));
    }
    out.extend(fold.finish());
    out
}

/// [`coalesce`] one entry at a time, for a log read row by row: it holds only the entry
/// that the next one may still fold into, so a long log is never in memory at once.
pub struct Fold<T> {
    pending: Option<T>,
}

impl<T> Default for Fold<T> {
    fn default() -> Self {
        Fold { pending: None }
    }
}

impl<T: Merge> Fold<T> {
    /// Takes the next entry; returns the one before it once `entry` cannot fold into it.
    pub fn push(&mut self, entry: T) -> Option<T> {
        if let Some(last) = &mut self.pending
            && last.try_merge(&entry)
        {
            return None;
        }
        self.pending.replace(entry)
    }

    /// The last entry, once the log has no more.
    pub fn finish(self) -> Option<T> {
        self.pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chunk(kind: &str, id: &str, text: &str) -> Event {
        Event::update(
            json!({"sessionUpdate": kind, "messageId": id, "content": {"type": "text", "text": text}}),
        )
    }

    #[test]
    fn merges_only_same_message_text() {
        let merged = coalesce(vec![
            chunk("agent_message_chunk", "m1", "Hel"),
            chunk("agent_message_chunk", "m1", "lo"),
            chunk("agent_thought_chunk", "m1", "hmm"),
            chunk("agent_message_chunk", "m2", "Bye"),
            chunk("agent_message_chunk", "m2", "!"),
        ]);
        assert_eq!(
            merged,
            vec![
                chunk("agent_message_chunk", "m1", "Hello"),
                chunk("agent_thought_chunk", "m1", "hmm"),
                chunk("agent_message_chunk", "m2", "Bye!"),
            ]
        );
    }

    #[test]
    fn never_merges_other_updates() {
        let info = Event::update(json!({"sessionUpdate": "session_info_update", "title": "a"}));
        assert_eq!(coalesce(vec![info.clone(), info.clone()]).len(), 2);
    }
}
