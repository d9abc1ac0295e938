//! Live sessions: their state, the per-session job queue and the prompt queue.

pub mod actor;
pub mod registry;
pub mod turns;

use std::sync::{Arc, Mutex, MutexGuard};

use agent_client_protocol_schema::v1::SessionUpdate;
use serde_json::{Value, json};

use crate::engine::Shared;
use crate::store::{Event, SessionRecord, StoreOp, now};

/// What a live session knows about itself beyond its log.
#[derive(Debug, Clone)]
pub struct SessionState {
    pub cwd: String,
    pub additional_dirs: Vec<String>,
    pub title: Option<String>,
    pub model: String,
}

impl SessionState {
    pub fn from_record(record: &SessionRecord, default_model: &str) -> Self {
        let model = record
            .config
            .get("model")
            .and_then(|m| m.as_str())
            .unwrap_or(default_model)
            .to_string();
        SessionState {
            cwd: record.cwd.clone(),
            additional_dirs: record.additional_dirs.clone(),
            title: record.title.clone(),
            model,
        }
    }
}

pub struct Session {
    pub id: Arc<str>,
    state: Mutex<SessionState>,
}

impl Session {
    pub fn new(id: Arc<str>, state: SessionState) -> Self {
        Session {
            id,
            state: Mutex::new(state),
        }
    }

    pub fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends an update to the log and sends it once committed.
    pub fn record(&self, shared: &Shared, update: SessionUpdate) {
        if let Some((frame, value)) = self.frame(update) {
            let op = StoreOp::Append {
                session_id: self.id.clone(),
                event: Event::update(value),
                at: now(),
            };
            shared.outbox.write(op, Some(frame));
        }
    }

    /// Appends an event the client never sees live (the user's own prompt).
    pub fn record_silently(&self, shared: &Shared, update: SessionUpdate) {
        if let Ok(value) = serde_json::to_value(update) {
            let op = StoreOp::Append {
                session_id: self.id.clone(),
                event: Event::update(value),
                at: now(),
            };
            shared.outbox.write(op, None);
        }
    }

    fn frame(&self, update: SessionUpdate) -> Option<(String, Value)> {
        let value = serde_json::to_value(update).ok()?;
        Some((update_frame(&self.id, &value), value))
    }
}

/// A `session/update` notification carrying an already serialized update (as stored).
pub fn update_frame(session_id: &str, update: &Value) -> String {
    crate::rpc::envelope::notification_frame(
        "session/update",
        &json!({ "sessionId": session_id, "update": update }),
    )
}
