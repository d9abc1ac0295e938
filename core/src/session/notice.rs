//! The one way to tell the user something outside the conversation (an MCP server failed, an
//! undo met a conflict, a compaction failed): an ACP `notice` where the client shows notices
//! (`session.notices`), else a line of agent message, `**Title:** description`.
//!
//! Either way it is sent, never logged: a notice describes that moment (the spec replays no
//! notices), so the agent message standing in for one is not replayed either.

use super::Session;
use super::events::{EventSink, SessionEvent, Visibility};
use crate::ids::new_id;

/// Tells the user `title` (short) and `description` (why, or what to do) through `sink`.
pub fn notify(session: &Session, sink: &dyn EventSink, title: &str, description: &str) {
    let event = if session.ctx().abilities().notices {
        SessionEvent::Notice {
            title: title.to_string(),
            description: description.to_string(),
        }
    } else {
        SessionEvent::MessageChunk {
            message_id: new_id("msg"),
            text: format!("**{title}:** {description}\n"),
        }
    };
    sink.emit(event, Visibility::Transient);
}
