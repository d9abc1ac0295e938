//! The ACP v1 wire: `session/update` notifications carrying the logged updates as they are
//! (the log is v1 too), and the fallbacks for a v1 client that does not show what an event
//! is — so every choice between two ways of telling a client something is made here:
//!
//! - a compaction: `compaction_update` / `compaction_summary_chunk` for a client that
//!   advertised `session.compaction`, else a tool call of kind `think` titled "Compacting
//!   conversation" (what peers' clients already render), without the summary's chunks: the
//!   finished call carries the whole summary;
//! - a notice: a `notice` update for a client that advertised `session.notices`, else a line
//!   of agent message, `**Title:** description`;
//! - a turn's provider failure: JetBrains' `sessionFailure` for a client that declared it in
//!   `_meta.jetbrains.air.capabilities`, else an error notice (so a line of agent message for
//!   a client without notices);
//! - a failed service (an MCP server): a notice for a client that shows notices, else a failed
//!   tool call named after it, where the user looks for what the agent could not use;
//! - a command's output: a display terminal for a client that advertised
//!   `_meta.terminal_output` (`v1/display_terminal.rs`), else the call's text content.
//!
//! The stand-in is what is logged, so a replay shows what the client saw live.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use self::display_terminal::DisplayTerminals;
use crate::context::{Replay, Wire};
use crate::ids::new_id;
use crate::lineage::ChildLink;
use crate::session::events::{CompactionTrigger, SessionEvent, ToolCallStart, ToolOutcome};
use crate::tools::{Kind, ToolContent};

/// What a v1 client shows beyond the base protocol (its `clientCapabilities.session`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shows {
    /// `notice` updates (`session.notices`).
    pub notices: bool,
    /// `compaction_update`s (`session.compaction`).
    pub compaction: bool,
    /// Display terminals (`_meta.terminal_output: true`, as Zed advertises).
    pub terminal_output: bool,
    /// JetBrains AIR's `sessionFailure` (`_meta.jetbrains.air.capabilities`).
    pub session_failure: bool,
    /// Subagents as restricted child sessions (`subagents`): their state updates, and their
    /// own frames on their own session id.
    pub subagents: bool,
}

/// The v1 wire of one connection.
pub struct V1Wire {
    shows: Shows,
    terminals: DisplayTerminals,
}

impl V1Wire {
    pub fn new(shows: Shows) -> Self {
        V1Wire {
            shows,
            terminals: DisplayTerminals::default(),
        }
    }

    /// The session a live update goes out on: a subagent's own (not its announcement, which
    /// its parent carries) for a client that shows child sessions.
    fn addressee<'a>(&self, session_id: &'a str, update: &'a Value) -> &'a str {
        if !self.shows.subagents {
            return session_id;
        }
        if update["sessionUpdate"] == "subagent_update" {
            return announced_on(session_id, update);
        }
        update
            .pointer("/_meta/hearth/childSessionId")
            .and_then(Value::as_str)
            .unwrap_or(session_id)
    }

    /// A compaction event for a client that does not show compactions: its tool call.
    fn compaction_call(event: SessionEvent) -> Option<SessionEvent> {
        match event {
            SessionEvent::CompactionStarted { id, trigger } => {
                Some(SessionEvent::ToolCallStarted(compaction_start(id, trigger)))
            }
            SessionEvent::CompactionChunk { .. } => None,
            SessionEvent::CompactionCompleted {
                id,
                summary,
                figures,
            } => {
                let raw_output = json!({
                    "trigger": figures.trigger.name(),
                    "preTokens": figures.tokens_before,
                    "postTokens": figures.tokens_after,
                });
                let outcome = ToolOutcome::Completed {
                    content: vec![ToolContent::Text(summary)],
                    raw_output: Some(raw_output),
                    meta: None,
                };
                Some(SessionEvent::ToolCallFinished { id, outcome })
            }
            SessionEvent::CompactionEnded { id, message, .. } => {
                let outcome = ToolOutcome::Failed(message);
                Some(SessionEvent::ToolCallFinished { id, outcome })
            }
            other => Some(other),
        }
    }
}

impl Wire for V1Wire {
    fn present(&self, event: SessionEvent) -> Option<SessionEvent> {
        match event {
            SessionEvent::CompactionStarted { .. }
            | SessionEvent::CompactionChunk { .. }
            | SessionEvent::CompactionCompleted { .. }
            | SessionEvent::CompactionEnded { .. }
                if !self.shows.compaction =>
            {
                V1Wire::compaction_call(event)
            }
            SessionEvent::TurnFailed { failure, .. } if self.shows.session_failure => {
                Some(SessionEvent::TurnFailed { failure, air: true })
            }
            SessionEvent::TurnFailed { failure, .. } if !self.shows.notices => {
                self.present(SessionEvent::Notice {
                    title: failure.title().to_string(),
                    description: failure.description(),
                })
            }
            SessionEvent::Notice { title, description } if !self.shows.notices => {
                Some(SessionEvent::MessageChunk {
                    message_id: new_id("msg"),
                    text: format!("**{title}:** {description}\n"),
                })
            }
            SessionEvent::SubagentState { .. } | SessionEvent::Delegated { .. }
                if !self.shows.subagents =>
            {
                None
            }
            // A subagent's text goes to a client that shows it on the child's session; the
            // others see it as the `task` call's progress.
            SessionEvent::Child { event, .. }
                if !self.shows.subagents && matches!(*event, SessionEvent::MessageChunk { .. }) =>
            {
                None
            }
            SessionEvent::ServiceFailed { title, message, .. } if self.shows.notices => {
                Some(SessionEvent::Notice {
                    title,
                    description: message,
                })
            }
            SessionEvent::Child { link, event } => {
                self.present(*event).map(|event| SessionEvent::Child {
                    link,
                    event: Box::new(event),
                })
            }
            other => Some(other),
        }
    }

    fn frame(&self, session_id: &str, update: &Value) -> String {
        let shown = self
            .shows
            .terminal_output
            .then(|| self.terminals.shown(update))
            .flatten();
        let session_id = self.addressee(session_id, update);
        update_frame(session_id, shown.as_ref().unwrap_or(update))
    }

    fn asks_on<'a>(&self, session_id: &'a str, subagent: Option<&'a ChildLink>) -> &'a str {
        match subagent {
            Some(link) if self.shows.subagents => &link.child_session_id,
            _ => session_id,
        }
    }

    fn replay<'a>(&'a self, session_id: &'a str) -> Box<dyn Replay + 'a> {
        Box::new(V1Replay {
            session_id,
            subagents: self.shows.subagents,
            announced: HashSet::new(),
        })
    }
}

/// A replay as this wire shows it: each logged update byte for byte on the session it was
/// logged on — but for a client that shows subagents as child sessions, a subagent's logged
/// call goes out on the subagent's own session, announced (`subagent_update`, with no state:
/// the log keeps none, and a replay must not invent one) before the first frame naming it, as
/// live.
struct V1Replay<'a> {
    session_id: &'a str,
    subagents: bool,
    announced: HashSet<String>,
}

impl Replay for V1Replay<'_> {
    fn frames(&mut self, stored: &RawValue, out: &mut dyn FnMut(String)) {
        // Only a subagent's call carries this key; the others are not parsed.
        let child_call = self.subagents && stored.get().contains("\"childSessionId\"");
        let parsed = child_call.then(|| serde_json::from_str::<Value>(stored.get()).ok());
        let Some(update) = parsed.flatten() else {
            return out(stored_update_frame(self.session_id, stored));
        };
        let Some(child) = update
            .pointer("/_meta/hearth/childSessionId")
            .and_then(Value::as_str)
        else {
            return out(stored_update_frame(self.session_id, stored));
        };
        if self.announced.insert(child.to_string()) {
            let announcement = json!({
                "sessionUpdate": "subagent_update",
                "sessionId": child,
                "description": update.pointer("/_meta/hearth/agent"),
                "_meta": update["_meta"],
            });
            out(update_frame(
                announced_on(self.session_id, &update),
                &announcement,
            ));
        }
        out(stored_update_frame(child, stored));
    }
}

/// The session a subagent's `subagent_update` goes out on (for a client that shows child
/// sessions): the child session that delegated it, or the client's `session_id`.
fn announced_on<'a>(session_id: &'a str, update: &'a Value) -> &'a str {
    update
        .pointer("/_meta/hearth/delegatingSessionId")
        .and_then(Value::as_str)
        .unwrap_or(session_id)
}

/// The `think` call standing in for a compaction.
fn compaction_start(id: String, trigger: CompactionTrigger) -> ToolCallStart {
    ToolCallStart {
        id,
        title: "Compacting conversation".into(),
        kind: Kind::Think,
        locations: Vec::new(),
        raw_input: json!({ "trigger": trigger.name() }),
        name: "compact".into(),
        diffs: Vec::new(),
    }
}

/// A `session/update` notification carrying `update` in wire form: a JSON value, or (on
/// replay) the stored JSON text of one, which comes out byte for byte as it went in.
fn update_frame<U: Serialize + ?Sized>(session_id: &str, update: &U) -> String {
    sized_update_frame(session_id, update, 0)
}

/// `update_frame` for a stored update, written into a buffer that fits it at once (a replay
/// builds thousands of them).
fn stored_update_frame(session_id: &str, update: &RawValue) -> String {
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

mod display_terminal;
#[cfg(test)]
mod tests;
