//! The one way to tell the user something outside the conversation (an MCP server failed, an
//! undo met a conflict, a compaction failed): a `Notice` event, which the connection's wire
//! shows as an ACP `notice` where the client shows notices, else as a line of agent message.
//!
//! Either way it is sent, never logged: a notice describes that moment (the spec replays no
//! notices), so the agent message standing in for one is not replayed either.

use super::events::{EventSink, SessionEvent, Visibility};

/// Tells the user `title` (short) and `description` (why, or what to do) through `sink`.
pub fn notify(sink: &dyn EventSink, title: &str, description: &str) {
    let event = SessionEvent::Notice {
        title: title.to_string(),
        description: description.to_string(),
    };
    sink.emit(event, Visibility::Transient);
}
