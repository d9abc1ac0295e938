//! Ids the engine makes up: tool calls, messages, notices. A leaf, so any module may make one.

/// A fresh id: `prefix`, an underscore and a random UUID's hex (`call_3f2a…`).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}
