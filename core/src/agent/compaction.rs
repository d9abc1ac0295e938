//! Compaction: making room in a session's context when its next request would pass the
//! configured share of the model's window, when the provider refused a request as too long,
//! or when the user asks (`/compact [focus]`).
//!
//! First the bodies of old tool results that a call can fetch again are cleared (the newest
//! ones stay); when that is not enough, or the user asked, the model writes a structured
//! summary and the context becomes that summary plus the newest messages verbatim. Nothing is
//! committed before the end: a cancel or a failed summary leaves the context as it was. The
//! log keeps everything (replay shows the whole history with the compaction in its place);
//! the compaction itself is logged as a rewrite a restart applies again.
//!
//! When: before a request whose estimated prompt passes `compaction.threshold` (default 0.8)
//! of the model's `contextWindow`; once after a provider's "context length exceeded"
//! (`LlmError::is_context_overflow`, then the request is retried); and on `/compact [focus]`
//! (`agent/commands/`: the command is replayed but marked, so the model never reads it). The
//! estimate is the provider's last prompt count plus the bytes added since ÷ 4
//! (`History::calibrate`), or bytes ÷ 4 before any count.
//!
//! How:
//! 1. Clear the bodies of old results of tools that only read (read, search, fetch kinds; the
//!    newest three and those under 512 bytes stay). For the threshold's compaction that is
//!    enough when it brings the estimate under half the window.
//! 2. Otherwise (and always for `/compact` and an overflow), ask the model for a structured
//!    summary (`compaction.md`: goal, decisions, files, open items, current state) of the
//!    context as step 1 left it, with the session's own system prompt and tools, so the
//!    provider's cache still serves the prefix up to the first cleared result. The context
//!    becomes the summary, the todo list if it was left behind, and the newest messages
//!    verbatim (at most 20% of the window and 30% of the context; mid-turn, at least the
//!    turn's prompt or its newest round of calls). The system prompt is rendered anew, with
//!    the project instructions read again.
//!
//! What is logged and shown: the rewrite is a model row `{"compaction": {id, pruned, summary,
//! keepFrom}}` that `History::apply` replays on a restart; a failure is reported (a notice)
//! and the session goes on. This module emits `CompactionStarted` / `CompactionChunk` /
//! `CompactionCompleted` (figures: trigger, preTokens, postTokens) / `CompactionEnded`, then the
//! new fill (`usage_update`); the v1 wire (`acp/wire/v1.rs`) shows them as `compaction_update` /
//! `compaction_summary_chunk` when the client advertised `session.compaction`, otherwise as a
//! tool call of kind `think` titled "Compacting conversation".
//!
//! Tests: end to end in `core/tests/long_sessions.rs` (thresholds, `/compact`, overflow,
//! restarts); the inline ones below cover the pure parts.

use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::{StopReason, TurnError, request};
use crate::chat::{AssistantPart, Message, ToolResult};
use crate::ids::new_id;
use crate::llm::{LlmError, Provider, StreamEvent};
use crate::session::Session;
use crate::session::events::{
    CompactionEnd, CompactionFigures, CompactionTrigger, EventSink, SessionEvent, Visibility,
};
use crate::session::history::{BYTES_PER_TOKEN, Compaction, History, message_weight};
use crate::session::notice::notify;
use crate::store::StoreError;
use crate::tools::Kind;

/// What the model is asked, after the conversation.
const INSTRUCTIONS: &str = include_str!("compaction.md");
/// Tool results that keep their bodies whatever the pressure: the newest ones, which the
/// model is most likely still working from.
const KEEP_RESULTS: usize = 3;
/// Results shorter than this are not worth clearing (the note is nearly as long).
const MIN_CLEARED_BYTES: usize = 512;
/// Clearing old results is enough when it brings the context under this share of the
/// window: well under the threshold, so the next steps do not compact again at once.
const PRUNED_ENOUGH: f64 = 0.5;
/// The newest messages a summary keeps verbatim: at most this share of the window…
const KEPT_SHARE_OF_WINDOW: f64 = 0.2;
/// …and at most this share of what is being compacted (so `/compact` on a short session
/// still summarises).
const KEPT_SHARE_OF_CONTEXT: f64 = 0.3;

pub enum Compacted {
    /// The context was rewritten (or there was nothing to compact).
    Done,
    Cancelled,
    /// The summary request failed; it was reported and the context is as it was.
    Failed(LlmError),
}

impl Compacted {
    /// How a turn that compacted on the user's request ends.
    pub fn stop(self) -> Result<StopReason, TurnError> {
        match self {
            Compacted::Done | Compacted::Failed(_) => Ok(StopReason::EndTurn),
            Compacted::Cancelled => Ok(StopReason::Cancelled),
        }
    }
}

/// Whether the next request would pass the threshold of the model's window.
pub fn needed(session: &Session) -> bool {
    let (used, window) = pressure(session);
    used as f64 > window as f64 * session.ctx().config().compaction_threshold()
}

/// The context's estimated size and the model's window, in tokens.
pub fn pressure(session: &Session) -> (u64, u64) {
    // The history's lock is not held while the system prompt is read (it takes it too).
    let calibrated = session.history().calibrated_tokens();
    let used = calibrated.unwrap_or_else(|| {
        let fixed = request::fixed_bytes(session);
        session.history().estimate_tokens(|| fixed)
    });
    (used, request::context_window(session))
}

/// What a compaction would free now (`/context`): the tokens clearing old read results gives
/// back, and what a summary would replace — the messages before the tail it keeps verbatim.
pub struct Preview {
    pub cleared_results: usize,
    pub cleared_tokens: u64,
    pub summarised_messages: usize,
    pub summarised_tokens: u64,
}

pub fn preview(session: &Session) -> Preview {
    let mut draft = session.history().clone();
    let pruned = prunable(session, &draft.messages());
    let weight = draft.weight();
    draft.apply(&Compaction {
        id: String::new(),
        pruned: pruned.clone(),
        summary: None,
        keep_from: 0,
    });
    let messages = draft.messages();
    let keep_from = keep_from(
        &messages,
        request::context_window(session),
        CompactionTrigger::Manual,
    );
    let tokens = |bytes: usize| (bytes / BYTES_PER_TOKEN) as u64;
    Preview {
        cleared_results: pruned.len(),
        cleared_tokens: tokens(weight - draft.weight()),
        summarised_messages: keep_from,
        summarised_tokens: tokens(draft.weight() - weight_from(&messages, keep_from)),
    }
}

pub async fn compact(
    session: &Session,
    sink: &dyn EventSink,
    token: &CancellationToken,
    provider: &dyn Provider,
    trigger: CompactionTrigger,
    focus: Option<&str>,
) -> Compacted {
    let id = new_id("cmp");
    let report = Report::start(sink, &id, trigger);
    let failed = |outcome: Compacted| {
        report.ended(&outcome);
        outcome
    };
    let (tokens_before, window) = pressure(session);
    if let Err(e) = session.recall().await {
        return failed(unreadable(e));
    }
    let mut draft = session.history().clone();
    let pruned = prunable(session, &draft.messages());
    draft.apply(&Compaction {
        id: id.clone(),
        pruned: pruned.clone(),
        summary: None,
        keep_from: 0,
    });
    let fixed = request::fixed_bytes(session);
    let freed = session.history().weight() - draft.weight();
    let pruned_tokens = tokens_before.saturating_sub((freed / BYTES_PER_TOKEN) as u64);
    // The user asked for a summary, and a provider that refused the request knows better
    // than the estimate: only a compaction of the threshold's may stop at clearing.
    let enough = trigger == CompactionTrigger::Automatic
        && !pruned.is_empty()
        && pruned_tokens as f64 <= window as f64 * PRUNED_ENOUGH;
    let (compaction, shown) = if enough {
        let shown = format!("Cleared the output of {} earlier tool calls.", pruned.len());
        let compaction = Compaction {
            id: id.clone(),
            pruned,
            summary: None,
            keep_from: 0,
        };
        (compaction, shown)
    } else {
        let summary = match summarise(session, &report, token, provider, &draft, focus).await {
            Ok(summary) => summary,
            Err(outcome) => return failed(outcome),
        };
        let keep_from = keep_from(&draft.messages(), window, trigger);
        let message = summary_message(&summary, &draft.messages()[..keep_from]);
        let compaction = Compaction {
            id: id.clone(),
            pruned,
            summary: Some(message),
            keep_from,
        };
        (compaction, summary)
    };
    crate::session::project::instructions::reread(session);
    if let Err(e) = session.compact(&compaction).await {
        return failed(unreadable(e));
    }
    let tokens_after = session.history().estimate_tokens(|| fixed);
    report.completed(
        &shown,
        CompactionFigures {
            trigger,
            tokens_before,
            tokens_after,
        },
    );
    let cost = super::stream::spent(session);
    super::stream::report_fill(sink, tokens_after, window, None, cost);
    Compacted::Done
}

/// A compaction that could not read the session's messages back from its log.
fn unreadable(error: StoreError) -> Compacted {
    Compacted::Failed(LlmError::new(format!(
        "cannot read the conversation back from the session's log: {error}"
    )))
}

/// The calls whose results may lose their bodies: those of tools that only read (a new call
/// gets the same again), but for the newest few and the short ones.
fn prunable(session: &Session, messages: &[Message]) -> Vec<String> {
    let results: Vec<&ToolResult> = messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResults { results } => Some(results.iter()),
            _ => None,
        })
        .flatten()
        .collect();
    let old = &results[..results.len().saturating_sub(KEEP_RESULTS)];
    old.iter()
        .filter(|r| r.content.len() >= MIN_CLEARED_BYTES || !r.images.is_empty())
        .filter(|r| {
            session
                .services()
                .tool(&r.name)
                .is_some_and(|tool| matches!(tool.kind(), Kind::Read | Kind::Search | Kind::Fetch))
        })
        .map(|r| r.call_id.clone())
        .collect()
}

/// Asks the model for the summary of `draft`, streaming it to the client as it comes.
async fn summarise(
    session: &Session,
    report: &Report<'_>,
    token: &CancellationToken,
    provider: &dyn Provider,
    draft: &History,
    focus: Option<&str>,
) -> Result<String, Compacted> {
    let mut ask = INSTRUCTIONS.to_string();
    if let Some(focus) = focus {
        ask.push_str(&format!(
            "\nThe user asks the summary to focus on: {focus}\n"
        ));
    }
    let mut messages = (*draft.messages()).clone();
    messages.push(Message::user_text(ask));
    // The same system prompt and tools as the session's requests: the provider's cache
    // still holds their prefix.
    let request = request::build(session, (0, Arc::new(messages)), Default::default());
    let mut events = tokio::select! {
        biased;
        () = token.cancelled() => return Err(Compacted::Cancelled),
        started = provider.stream(request) => started.map_err(Compacted::Failed)?,
    };
    let mut summary = String::new();
    loop {
        let next = tokio::select! {
            biased;
            () = token.cancelled() => return Err(Compacted::Cancelled),
            next = events.next() => next,
        };
        match next {
            None => break,
            Some(Err(e)) => return Err(Compacted::Failed(e)),
            Some(Ok(StreamEvent::Text(text))) => {
                report.chunk(&text);
                summary.push_str(&text);
            }
            // Reasoning and tool calls are not the summary.
            Some(Ok(_)) => {}
        }
    }
    if summary.trim().is_empty() {
        return Err(Compacted::Failed(LlmError::new(
            "the model returned an empty summary",
        )));
    }
    Ok(summary)
}

/// Where the verbatim tail begins: as far back as its share allows, at a message that can
/// open a conversation (not the results of calls left behind). A compaction in the middle of
/// a turn keeps at least the turn's prompt and what followed it, or else its newest round of
/// calls, when that fits in half the window: the model is still working on them.
fn keep_from(messages: &[Message], window: u64, trigger: CompactionTrigger) -> usize {
    let total: usize = messages.iter().map(message_weight).sum();
    let window_bytes = window as usize * BYTES_PER_TOKEN;
    let by_window = window_bytes as f64 * KEPT_SHARE_OF_WINDOW;
    let budget = by_window.min(total as f64 * KEPT_SHARE_OF_CONTEXT) as usize;
    let mut start = tail_within(messages, budget);
    if trigger != CompactionTrigger::Manual {
        let half = window_bytes / 2;
        let turn = messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }));
        let round = messages.len().checked_sub(2).filter(|&i| {
            matches!(messages[i], Message::Assistant { .. })
                && matches!(messages[i + 1], Message::ToolResults { .. })
        });
        let fits = |from: &usize| weight_from(messages, *from) <= half;
        if let Some(from) = turn.filter(fits).or(round.filter(fits)) {
            start = start.min(from);
        }
    }
    start
}

/// The earliest start of a tail weighing at most `budget` that opens with no results.
fn tail_within(messages: &[Message], budget: usize) -> usize {
    let mut start = messages.len();
    let mut kept = 0;
    while start > 0 && kept + message_weight(&messages[start - 1]) <= budget {
        start -= 1;
        kept += message_weight(&messages[start]);
    }
    while start < messages.len() && matches!(messages[start], Message::ToolResults { .. }) {
        start += 1;
    }
    start
}

fn weight_from(messages: &[Message], from: usize) -> usize {
    messages[from..].iter().map(message_weight).sum()
}

/// The message that stands for everything before the kept tail: the summary, and the todo
/// list if the model's last one is in what is left behind (the summary alone tends to lose
/// it). The project instructions come back with the system prompt, which is read again.
fn summary_message(summary: &str, dropped: &[Message]) -> Message {
    let mut text = format!(
        "[This conversation was compacted to fit the model's context window. Below is a \
         summary of the earlier part; the most recent messages follow it verbatim.]\n\n{}",
        summary.trim()
    );
    if let Some(todos) = last_todo_list(dropped) {
        text.push_str(&format!(
            "\n\n[The todo list as last set with the `todo` tool: {todos}]"
        ));
    }
    Message::user_text(text)
}

fn last_todo_list(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find_map(|m| match m {
        Message::Assistant { parts } => parts.iter().rev().find_map(|p| match p {
            AssistantPart::ToolCall {
                name, arguments, ..
            } if name == "todo" => Some(arguments.clone()),
            _ => None,
        }),
        _ => None,
    })
}

/// What the client hears of one compaction, as typed events (the connection's wire shows
/// them as `compaction_update`s or as a tool call, from what the client advertised).
struct Report<'a> {
    sink: &'a dyn EventSink,
    id: &'a str,
}

impl<'a> Report<'a> {
    fn start(sink: &'a dyn EventSink, id: &'a str, trigger: CompactionTrigger) -> Report<'a> {
        let event = SessionEvent::CompactionStarted {
            id: id.to_string(),
            trigger,
        };
        sink.emit(event, Visibility::Live);
        Report { sink, id }
    }

    fn chunk(&self, text: &str) {
        let chunk = SessionEvent::CompactionChunk {
            id: self.id.to_string(),
            text: text.to_string(),
        };
        self.sink.emit(chunk, Visibility::Live);
    }

    fn completed(&self, summary: &str, figures: CompactionFigures) {
        let event = SessionEvent::CompactionCompleted {
            id: self.id.to_string(),
            summary: summary.to_string(),
            figures,
        };
        self.sink.emit(event, Visibility::Live);
    }

    /// A compaction that did not happen: cancelled, or its summary failed (which the user
    /// is also told as a notice: the conversation goes on uncompacted).
    fn ended(&self, outcome: &Compacted) {
        let (end, message) = match outcome {
            Compacted::Cancelled => (
                CompactionEnd::Cancelled,
                "Compaction cancelled; the conversation is unchanged.".to_string(),
            ),
            Compacted::Failed(e) => (
                CompactionEnd::Failed,
                format!("Compaction failed; the conversation is unchanged: {e}"),
            ),
            Compacted::Done => return,
        };
        if end == CompactionEnd::Failed {
            notify(self.sink, "Compaction failed", &message);
        }
        let event = SessionEvent::CompactionEnded {
            id: self.id.to_string(),
            end,
            message,
        };
        self.sink.emit(event, Visibility::Live);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(id: &str, bytes: usize) -> Message {
        Message::ToolResults {
            results: vec![ToolResult::text(
                id.into(),
                "read".into(),
                "x".repeat(bytes),
                false,
            )],
        }
    }

    fn calls(id: &str) -> Message {
        Message::Assistant {
            parts: vec![AssistantPart::ToolCall {
                id: id.into(),
                name: "read".into(),
                arguments: "{}".into(),
            }],
        }
    }

    #[test]
    fn the_kept_tail_never_opens_with_results() {
        let messages = vec![
            Message::user_text("go"),
            calls("a"),
            results("a", 4000),
            calls("b"),
            results("b", 100),
            Message::Assistant {
                parts: vec![AssistantPart::Text { text: "ok".into() }],
            },
        ];
        // A budget that would start the tail at `results("b")` starts it after.
        let start = keep_from(&messages, 2_000, CompactionTrigger::Manual);
        assert!(!matches!(messages[start], Message::ToolResults { .. }));
        assert!(start >= 3, "{start}");
    }

    /// Mid-turn, the prompt being worked on stays, however small the budget.
    #[test]
    fn an_automatic_compaction_keeps_the_current_turn() {
        let messages = vec![
            Message::user_text("old"),
            Message::Assistant {
                parts: vec![AssistantPart::Text {
                    text: "x".repeat(10_000),
                }],
            },
            Message::user_text("n".repeat(5_000)),
            calls("a"),
            results("a", 800),
        ];
        assert_eq!(
            keep_from(&messages, 100_000, CompactionTrigger::Automatic),
            2
        );
        assert_eq!(keep_from(&messages, 100_000, CompactionTrigger::Manual), 3);
        // A turn too large for half the window keeps its newest round only.
        assert_eq!(keep_from(&messages, 500, CompactionTrigger::Overflow), 3);
    }

    #[test]
    fn a_dropped_todo_list_comes_back() {
        let todo = Message::Assistant {
            parts: vec![AssistantPart::ToolCall {
                id: "t".into(),
                name: "todo".into(),
                arguments: r#"{"todos":[{"content":"ship","status":"pending"}]}"#.into(),
            }],
        };
        let Message::User { content } = summary_message("S", &[todo]) else {
            unreachable!()
        };
        let crate::chat::UserPart::Text { text } = &content[0] else {
            unreachable!()
        };
        assert!(text.contains("\n\nS\n\n[The todo list"), "{text}");
        assert!(text.contains(r#""content":"ship""#), "{text}");
    }
}
