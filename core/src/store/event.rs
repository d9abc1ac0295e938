//! One entry of a session's append-only log.
//!
//! `update` is the `session/update` payload exactly as the client saw it (replayed verbatim
//! by `session/load`); `model` is what only the model needs (absent for most events). The
//! model's context and the replay are both derived from these rows: one source of truth.

use serde_json::Value;

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
        self.update
            .as_ref()
            .and_then(|u| u.get("sessionUpdate"))
            .and_then(Value::as_str)
            .unwrap_or("model")
    }

    /// Folds `next` into `self` when both are text chunks of the same message, so a streamed
    /// message costs one row and replays as one chunk. Returns whether it did.
    pub fn try_merge(&mut self, next: &Event) -> bool {
        if self.model.is_some() || next.model.is_some() || self.kind() != next.kind() {
            return false;
        }
        if !CHUNK_KINDS.contains(&self.kind()) {
            return false;
        }
        let (Some(mine), Some(theirs)) = (self.update.as_mut(), next.update.as_ref()) else {
            return false;
        };
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
}

/// Merges adjacent chunks of the same message in place.
pub fn coalesce(events: Vec<Event>) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::with_capacity(events.len());
    for event in events {
        if let Some(last) = out.last_mut()
            && last.try_merge(&event)
        {
            continue;
        }
        out.push(event);
    }
    out
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
