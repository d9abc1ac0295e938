//! The model's context of a live session, kept in memory: built from the log once when the
//! session comes up, then appended to as the session logs what the model must see. A model
//! step therefore costs the same at the ten-thousandth event as at the first, and each request
//! of a session is the previous one with messages appended — byte for byte, which is what the
//! providers' prompt caches match on — until a compaction rewrites it.
//!
//! The live path and the rebuild share one function, [`History::observe`], fed the same rows
//! the log keeps: what the model remembers is what a restart restores.
//!
//! Built by [`History::observe`] over the rows `Reader::for_each_context_event` hands over
//! (prompt blocks and model-only rows); then a prompt block arrives through `observe` (decoded as a restart
//! decodes it) and a model message through `Session::remember`, so a model step reads nothing
//! from SQLite. Calls left without results (a cancel, a crash) get a "not run" result before
//! anything else joins the context, live and rebuilt alike. A compaction's rewrite is a logged
//! row that `History::apply` replays.
//!
//! Once a request has encoded a message (`llm/wire.rs`), a session's history lets go of its
//! value (`History::settle`): the encoding is what the next requests copy, and the log still
//! has the message. So a long session holds its context about once, as the provider reads
//! it, not twice. What needs the values of them all — a compaction, `/context`, a request to
//! another provider, which encodes every message anew — first reads them back from the log
//! (`Session::recall`, through the same `observe` a restart runs). A subagent's messages are
//! not logged, and its history keeps them all.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::events::Recorded;
use crate::chat::{AssistantPart, Message, ToolResult, UserPart};
use crate::context::LogFormat;
use crate::llm::wire::{self, SharedWire};
use crate::store::Event;

/// Bytes of text per token, for estimates: the usual figure for English and code.
pub const BYTES_PER_TOKEN: usize = 4;
/// What an image weighs in the estimate, in bytes of text (about 1,600 tokens: the most a
/// downscaled image costs on Anthropic, more than on OpenAI).
const IMAGE_WEIGHT: usize = 1600 * BYTES_PER_TOKEN;

/// What stands in for a cleared tool result.
pub fn cleared_note(tool: &str) -> String {
    format!("[Output cleared to save context; call `{tool}` again if you need it.]")
}

/// A rewrite of the context, as logged (the model column's `{"compaction": …}`): the results
/// of `pruned` calls lose their bodies; then, with a `summary`, the context becomes the
/// summary followed by the messages from `keep_from` on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    pub id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pruned: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Message>,
    #[serde(default)]
    pub keep_from: usize,
}

impl Compaction {
    /// The model column that logs it.
    pub fn to_model(&self) -> Value {
        json!({ "compaction": self })
    }
}

#[derive(Default, Clone)]
pub struct History {
    /// The newest messages: every one no request has encoded yet, and the last one (a
    /// prompt's next block joins it, its calls' results follow it). All of them until the
    /// history lets go of the encoded ones (`logged`). Shared with the request in flight;
    /// appending clones only if one still holds it.
    messages: Arc<Vec<Message>>,
    /// How many messages come before `messages`: encoded in `wire`, kept in the log.
    earlier: usize,
    /// The session logs its messages, so the history may let go of those encoded.
    logged: bool,
    /// The prompt the user blocks being received belong to (its blocks join one message).
    open_prompt: Option<String>,
    /// The system prompt the session's requests carry: fixed at the first request, and
    /// again after a compaction (which re-reads the project instructions).
    system: Option<Arc<str>>,
    /// The estimate's weight of `messages`, in bytes of text.
    weight: usize,
    /// The prompt size the provider last reported, and the weight of the messages it had.
    reported: Option<(u64, usize)>,
    /// `messages` as the provider encoded them for the previous request.
    wire: SharedWire,
}

impl History {
    /// This history, replayed from a log, as a session that comes up again continues it: a
    /// turn a crash or a shutdown cut short may have left calls without results.
    pub fn restarted(mut self) -> History {
        self.close_open_calls();
        self
    }

    /// The history of a session that logs its messages: it lets go of those a request has
    /// encoded, which `Session::recall` reads back when needed.
    pub fn logged(self) -> History {
        History {
            logged: true,
            ..self
        }
    }

    /// Takes in one logged row: a prompt block, a model message or a compaction. Other rows
    /// are not the model's business.
    pub fn observe(&mut self, event: &Event, format: &dyn LogFormat) {
        if let Some(model) = &event.model {
            if let Some(message) = model.get("message") {
                if let Ok(message) = serde_json::from_value::<Message>(message.clone()) {
                    self.push(message);
                }
            } else if let Some(compaction) = model.get("compaction")
                && let Ok(compaction) = serde_json::from_value::<Compaction>(compaction.clone())
            {
                self.apply(&compaction);
            }
            return;
        }
        let Some(update) = &event.update else { return };
        if let Recorded::UserPart { message_id, part } = format.decode(update) {
            self.push_user_part(message_id, part);
        }
    }

    /// Every message of the context; the history must be whole (`Session::recall`).
    pub fn messages(&self) -> Arc<Vec<Message>> {
        debug_assert!(self.is_whole(), "the context's messages were let go of");
        self.messages.clone()
    }

    /// The messages in memory, and how many come before them (see `earlier`).
    pub fn kept(&self) -> (usize, Arc<Vec<Message>>) {
        (self.earlier, self.messages.clone())
    }

    /// Whether every message's value is in memory.
    pub fn is_whole(&self) -> bool {
        self.earlier == 0
    }

    /// Whether a request in `dialect` can be built from what is in memory: every message,
    /// or the encoding in that dialect of those let go of.
    pub fn encodes_for(&self, dialect: wire::Dialect) -> bool {
        let (encoded_in, encoded) = wire::encoded(&self.wire);
        self.is_whole() || (encoded_in == Some(dialect) && encoded >= self.earlier)
    }

    /// Takes back the messages it let go of from `whole`, the same context read back from
    /// the log, where every one of them was logged before a request encoded it.
    pub fn take_back(&mut self, whole: History) {
        let mut messages = Arc::unwrap_or_clone(whole.messages);
        if messages.len() < self.earlier {
            tracing::error!(
                logged = messages.len(),
                expected = self.earlier,
                "the log holds fewer messages than the context let go of"
            );
            // What the request will send is what there is, encoded anew.
            self.wire = SharedWire::default();
        }
        messages.truncate(self.earlier);
        messages.extend(self.messages.iter().cloned());
        self.messages = Arc::new(messages);
        self.earlier = 0;
    }

    /// The encoded messages of this context's requests (a rewrite starts anew).
    pub fn wire(&self) -> SharedWire {
        self.wire.clone()
    }

    pub fn system(&self) -> Option<Arc<str>> {
        self.system.clone()
    }

    pub fn fix_system(&mut self, system: Arc<str>) {
        self.system = Some(system);
    }

    /// What the system prompt is made of changed (the client's part, the workspace roots):
    /// the next request renders it anew.
    pub fn unfix_system(&mut self) {
        self.system = None;
    }

    /// What the next request's prompt will weigh, in tokens: the provider's last figure plus
    /// what was added since, or an estimate from the text when it gave none. `fixed` gives
    /// the system prompt's and the tools' bytes (asked only then).
    pub fn estimate_tokens(&self, fixed: impl FnOnce() -> usize) -> u64 {
        self.calibrated_tokens()
            .unwrap_or_else(|| ((fixed() + self.weight) / BYTES_PER_TOKEN) as u64)
    }

    /// The estimate from the provider's last count, if it gave one since the last rewrite.
    pub fn calibrated_tokens(&self) -> Option<u64> {
        let (tokens, weight) = self.reported?;
        Some(tokens + (self.weight.saturating_sub(weight) / BYTES_PER_TOKEN) as u64)
    }

    /// The provider's count of a request's prompt, sent when the messages weighed `weight`.
    pub fn calibrate(&mut self, prompt_tokens: u64, weight: usize) {
        self.reported = Some((prompt_tokens, weight));
    }

    pub fn weight(&self) -> usize {
        self.weight
    }

    pub fn push(&mut self, message: Message) {
        self.open_prompt = None;
        if let Message::ToolResults { results } = message {
            return self.push_results(results);
        }
        self.close_open_calls();
        self.append(message);
    }

    fn push_user_part(&mut self, message_id: Option<String>, part: UserPart) {
        let same_prompt = message_id.is_some() && message_id == self.open_prompt;
        let weight = part_weight(&part);
        let last = self.len().saturating_sub(1);
        if same_prompt && let Some(Message::User { content }) = self.last_mut() {
            content.push(part);
            self.weight += weight;
            wire::forget(&self.wire, last);
            return;
        }
        self.push(Message::User {
            content: vec![part],
        });
        self.open_prompt = message_id;
    }

    /// Results follow their calls; calls that got none (a cancel cut the batch short) get one
    /// saying so, since providers refuse a call without its result.
    fn push_results(&mut self, mut results: Vec<ToolResult>) {
        for (id, name) in self.open_calls() {
            if !results.iter().any(|r| r.call_id == id) {
                results.push(not_run(id, name));
            }
        }
        self.append(Message::ToolResults { results });
    }

    /// Answers the calls of the newest message if it is a model message whose calls have no
    /// results yet: something other than their results is about to follow it.
    pub fn close_open_calls(&mut self) {
        let open = self.open_calls();
        if !open.is_empty() {
            let results = open.into_iter().map(|(id, name)| not_run(id, name));
            self.append(Message::ToolResults {
                results: results.collect(),
            });
        }
    }

    /// The calls of the newest message, when it is a model message (their results would
    /// follow it).
    pub fn open_calls(&self) -> Vec<(String, String)> {
        match self.messages.last() {
            Some(Message::Assistant { parts }) => parts
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Rewrites the context as `compaction` says; the next request re-reads the system
    /// prompt and the provider's count starts over.
    pub fn apply(&mut self, compaction: &Compaction) {
        debug_assert!(self.is_whole(), "a rewrite needs every message");
        self.close_open_calls();
        self.open_prompt = None;
        let messages = Arc::make_mut(&mut self.messages);
        for message in messages.iter_mut() {
            if let Message::ToolResults { results } = message {
                for result in results.iter_mut() {
                    if compaction.pruned.contains(&result.call_id) {
                        result.content = cleared_note(&result.name);
                        result.images.clear();
                    }
                }
            }
        }
        if let Some(summary) = &compaction.summary {
            let kept = messages.split_off(compaction.keep_from.min(messages.len()));
            *messages = std::iter::once(summary.clone()).chain(kept).collect();
        }
        self.weight = messages.iter().map(message_weight).sum();
        self.system = None;
        self.reported = None;
        self.wire = SharedWire::default();
    }

    fn append(&mut self, message: Message) {
        self.weight += message_weight(&message);
        Arc::make_mut(&mut self.messages).push(message);
        self.settle();
    }

    /// How many messages the context holds.
    fn len(&self) -> usize {
        self.earlier + self.messages.len()
    }

    /// Lets go of the messages a request encoded, but the newest: the log keeps them, and
    /// the wire their encoding, which is all the next request needs of them.
    fn settle(&mut self) {
        if !self.logged {
            return;
        }
        let (_, encoded) = wire::encoded(&self.wire);
        let settled = encoded
            .saturating_sub(self.earlier)
            .min(self.messages.len().saturating_sub(1));
        if settled > 0 {
            self.messages = Arc::new(self.messages[settled..].to_vec());
            self.earlier += settled;
        }
    }

    fn last_mut(&mut self) -> Option<&mut Message> {
        Arc::make_mut(&mut self.messages).last_mut()
    }
}

fn not_run(call_id: String, name: String) -> ToolResult {
    ToolResult::text(
        call_id,
        name,
        "Not run: the turn was interrupted.".into(),
        true,
    )
}

/// A message's weight in the estimate: its text, and a fixed figure per image.
pub fn message_weight(message: &Message) -> usize {
    match message {
        Message::User { content } => content.iter().map(part_weight).sum(),
        Message::Assistant { parts } => parts
            .iter()
            .map(|p| match p {
                AssistantPart::Text { text } | AssistantPart::Thinking { text, .. } => text.len(),
                AssistantPart::RedactedThinking { data } => data.len(),
                AssistantPart::ServerBlock { block } => block.to_string().len(),
                AssistantPart::CitedText { text, citations } => {
                    text.len() + citations.iter().map(|c| c.to_string().len()).sum::<usize>()
                }
                AssistantPart::ToolCall {
                    name, arguments, ..
                } => name.len() + arguments.len(),
            })
            .sum(),
        Message::ToolResults { results } => results
            .iter()
            .map(|r| r.content.len() + r.images.len() * IMAGE_WEIGHT)
            .sum(),
    }
}

fn part_weight(part: &UserPart) -> usize {
    match part {
        UserPart::Text { text } => text.len(),
        UserPart::Image(_) => IMAGE_WEIGHT,
    }
}

#[cfg(test)]
mod tests;
