//! Live sessions: their state, the per-session job queue and the prompt queue.

pub mod actor;
pub mod client;
pub mod recovery;
pub mod registry;
pub mod turns;

use std::sync::{Arc, Mutex, MutexGuard};

use agent_client_protocol_schema::v1::SessionUpdate;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::config::{Config, ModelInfo};
use crate::engine::Shared;
use crate::llm::ThoughtLevel;
use crate::permissions::Mode;
use crate::store::{Event, SessionRecord, StoreOp, now};

/// The session's config values (the `configOptions` the client sees), stored as the
/// session row's `config` JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub model: String,
    pub mode: Mode,
    /// Used only when the model takes a thinking level.
    pub thought_level: ThoughtLevel,
}

impl Settings {
    pub fn defaults(config: &Config) -> Settings {
        Settings {
            model: config.default_model(),
            mode: config.permission_mode.unwrap_or_default(),
            thought_level: ThoughtLevel::Medium,
        }
    }

    /// Stored values, each falling back to its default when missing, invalid or (for the
    /// model) no longer in the catalog.
    pub fn from_stored(stored: &Value, config: &Config, catalog: &[ModelInfo]) -> Settings {
        let defaults = Settings::defaults(config);
        let field = |name: &str| stored.get(name).cloned();
        Settings {
            model: field("model")
                .and_then(|m| m.as_str().map(str::to_string))
                .filter(|m| catalog.iter().any(|c| c.id == *m))
                .unwrap_or(defaults.model),
            mode: field("mode")
                .and_then(|m| serde_json::from_value(m).ok())
                .unwrap_or(defaults.mode),
            thought_level: field("thoughtLevel")
                .and_then(|t| serde_json::from_value(t).ok())
                .unwrap_or(defaults.thought_level),
        }
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// What a live session knows about itself beyond its log.
#[derive(Debug, Clone)]
pub struct SessionState {
    pub cwd: String,
    pub additional_dirs: Vec<String>,
    pub title: Option<String>,
    pub settings: Settings,
}

impl SessionState {
    pub fn from_record(record: &SessionRecord, config: &Config, catalog: &[ModelInfo]) -> Self {
        SessionState {
            cwd: record.cwd.clone(),
            additional_dirs: record.additional_dirs.clone(),
            title: record.title.clone(),
            settings: Settings::from_stored(&record.config, config, catalog),
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
        if let Ok(value) = serde_json::to_value(update) {
            self.record_value(shared, value);
        }
    }

    /// `record` for an update already in wire form.
    pub fn record_value(&self, shared: &Shared, update: Value) {
        let frame = update_frame(&self.id, &update);
        let op = StoreOp::Append {
            session_id: self.id.clone(),
            event: Event::update(update),
            at: now(),
        };
        shared.outbox.write(op, Some(frame));
    }

    /// Sends an update the log does not keep (live terminal output: the final tool call
    /// update carries the bounded result).
    pub fn notify_value(&self, shared: &Shared, update: &Value) {
        shared.outbox.frame(update_frame(&self.id, update));
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

    /// Appends an update that the client will see on the next replay, not now.
    pub fn record_for_replay(&self, shared: &Shared, update: Value) {
        let op = StoreOp::Append {
            session_id: self.id.clone(),
            event: Event::update(update),
            at: now(),
        };
        shared.outbox.write(op, None);
    }

    /// Appends what only the model needs (its messages, tool results).
    pub fn record_for_model(&self, shared: &Shared, model: Value) {
        let op = StoreOp::Append {
            session_id: self.id.clone(),
            event: Event {
                update: None,
                model: Some(model),
            },
            at: now(),
        };
        shared.outbox.write(op, None);
    }
}

/// A `session/update` notification carrying `update` in wire form: a JSON value, or (on
/// replay) the stored JSON text of one, which comes out byte for byte as it went in.
pub fn update_frame<U: Serialize + ?Sized>(session_id: &str, update: &U) -> String {
    sized_update_frame(session_id, update, 0)
}

/// `update_frame` for a stored update, written into a buffer that fits it at once (a replay
/// builds thousands of them).
pub fn stored_update_frame(session_id: &str, update: &RawValue) -> String {
    sized_update_frame(session_id, update, update.get().len() + session_id.len())
}

fn sized_update_frame<U: Serialize + ?Sized>(session_id: &str, update: &U, size: usize) -> String {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Params<'a, U: ?Sized> {
        session_id: &'a str,
        update: &'a U,
    }
    // The envelope around params: `{"jsonrpc":"2.0","method":"session/update","params":
    // {"sessionId":"","update":}}` is 80 bytes.
    let capacity = (size + 96).max(256);
    let params = Params { session_id, update };
    crate::rpc::envelope::notification_frame_sized("session/update", params, capacity)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use serde_json::value::RawValue;

    use super::*;

    /// Replay frames the stored text of an update; live frames serialize its value.
    #[test]
    fn a_stored_update_frames_like_its_value() {
        let update =
            json!({"sessionUpdate": "plan", "z": [1.5, -0.0, 1e300], "a": "é \"q\"\n\u{1}"});
        let stored = RawValue::from_string(update.to_string()).unwrap();
        // Ids are the engine's own (`sess_` and hex), but nothing here relies on that.
        for id in ["sess_0123abcd", "odd \"id\"\\\n\u{7f}é"] {
            assert_eq!(stored_update_frame(id, &stored), update_frame(id, &update));
        }
    }
}
