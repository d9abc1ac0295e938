//! One model call as the sink sees it: deltas go out as chunks (into the log too, where
//! replay folds them back together); the assembled message — text, thinking with its
//! signature, tool calls, the blocks of the provider's own search — is remembered once for
//! the model's future context. The provider's search is shown as a call (`hosted_search.rs`).

use futures::{FutureExt, StreamExt};

use super::StopReason;
use super::calls::ModelCall;
use super::hosted_search::HostedSearches;
use crate::chat::{AssistantPart, Message};
use crate::config::Price;
use crate::ids::new_id;
use crate::llm::{EventStream, FinishReason, LlmError, StreamEvent, Usage};
use crate::session::Session;
use crate::session::events::{Cost, EventSink, SessionEvent, Visibility};

/// One model call's answer as it streams in: the text and thinking so far, the tool calls,
/// why it finished and its usage.
pub struct Accumulator {
    message_id: String,
    thought_id: String,
    parts: Vec<AssistantPart>,
    finish: Option<FinishReason>,
    pub usage: Option<Usage>,
    searches: HostedSearches,
}

impl Accumulator {
    pub fn new() -> Self {
        Accumulator {
            message_id: new_id("msg"),
            thought_id: new_id("msg"),
            parts: Vec::new(),
            finish: None,
            usage: None,
            searches: HostedSearches::default(),
        }
    }

    pub fn take(&mut self, sink: &dyn EventSink, event: StreamEvent) {
        match event {
            StreamEvent::Text(text) => {
                let chunk = SessionEvent::MessageChunk {
                    message_id: self.message_id.clone(),
                    text: text.clone(),
                };
                sink.emit(chunk, Visibility::Live);
                match self.parts.last_mut() {
                    Some(AssistantPart::Text { text: last }) => last.push_str(&text),
                    _ => self.parts.push(AssistantPart::Text { text }),
                }
            }
            StreamEvent::Reasoning(text) => {
                let chunk = SessionEvent::ThoughtChunk {
                    message_id: self.thought_id.clone(),
                    text: text.clone(),
                };
                sink.emit(chunk, Visibility::Live);
                match self.parts.last_mut() {
                    Some(AssistantPart::Thinking {
                        text: last,
                        signature: None,
                    }) => last.push_str(&text),
                    _ => self.parts.push(AssistantPart::Thinking {
                        text,
                        signature: None,
                    }),
                }
            }
            StreamEvent::ThinkingSignature(signature) => match self.parts.last_mut() {
                Some(AssistantPart::Thinking {
                    signature: slot @ None,
                    ..
                }) => *slot = Some(signature),
                _ => self.parts.push(AssistantPart::Thinking {
                    text: String::new(),
                    signature: Some(signature),
                }),
            },
            StreamEvent::RedactedThinking(data) => {
                self.parts.push(AssistantPart::RedactedThinking { data })
            }
            StreamEvent::ToolCall {
                id,
                name,
                arguments,
            } => self.parts.push(AssistantPart::ToolCall {
                id,
                name,
                arguments,
            }),
            StreamEvent::ServerBlock(block) => {
                self.parts.push(AssistantPart::ServerBlock { block })
            }
            StreamEvent::CitedText { text, citations } => self.cite(text, citations),
            StreamEvent::Search(event) => self.searches.take(sink, event),
            StreamEvent::Usage(usage) => self.usage = Some(usage),
            StreamEvent::Finish(reason) => self.finish = Some(reason),
        }
    }

    /// The text block that just ended had citations: its text, the end of the text so far,
    /// becomes a part of its own with them.
    fn cite(&mut self, text: String, citations: Vec<serde_json::Value>) {
        if let Some(AssistantPart::Text { text: last }) = self.parts.last_mut()
            && last.ends_with(&text)
        {
            last.truncate(last.len() - text.len());
            if last.is_empty() {
                self.parts.pop();
            }
        }
        self.parts
            .push(AssistantPart::CitedText { text, citations });
    }

    /// Whether the provider paused the answer, to be resumed by the next request.
    pub fn paused(&self) -> bool {
        self.finish == Some(FinishReason::Paused)
    }

    /// Fails the provider's searches whose results never came (the stream ended early).
    pub fn close_searches(&mut self, sink: &dyn EventSink) {
        self.searches.end(sink);
    }

    pub fn stop_reason(&self) -> StopReason {
        match self.finish {
            Some(FinishReason::Length) => StopReason::MaxTokens,
            Some(FinishReason::ContentFilter) => StopReason::Refusal,
            _ => StopReason::EndTurn,
        }
    }

    /// The complete tool calls of this answer, in order.
    pub fn tool_calls(&self) -> Vec<ModelCall> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                AssistantPart::ToolCall {
                    id,
                    name,
                    arguments,
                } => Some(ModelCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// Remembers the assembled message for the model's context (nothing if nothing streamed).
    pub fn remember(&self, sink: &dyn EventSink) {
        if !self.parts.is_empty() {
            sink.remember(Message::Assistant {
                parts: self.parts.clone(),
            });
        }
    }

    /// Tells the client how full the context is, when the provider said.
    /// Tells the client how full the context is, when the provider said, and keeps the
    /// provider's count of the prompt (sent when the messages weighed `weight`) for the
    /// compaction threshold.
    pub fn report_usage(&self, session: &Session, sink: &dyn EventSink, weight: usize) {
        let Some(usage) = self.usage else { return };
        let prompt = usage.input + usage.cache_read + usage.cache_write;
        session.history().calibrate(prompt, weight);
        let size = super::request::context_window(session);
        let cost = spend(session, &usage);
        report_fill(sink, prompt + usage.output, size, Some(usage), cost);
    }
}

/// Adds what `usage` cost to the session's spending, if its model has a price; returns the
/// session's total.
fn spend(session: &Session, usage: &Usage) -> Option<Cost> {
    session.spend(cost(&price(session)?, usage));
    spent(session)
}

/// What one request's `usage` cost at `price` (per million tokens).
fn cost(price: &Price, usage: &Usage) -> f64 {
    let tokens = |n: u64, per_million: f64| n as f64 * per_million / 1_000_000.0;
    tokens(usage.input, price.input)
        + tokens(usage.output, price.output)
        + tokens(usage.cache_read, price.cache_read.unwrap_or(price.input))
        + tokens(usage.cache_write, price.cache_write.unwrap_or(price.input))
}

/// What the session spent so far, if its model has a price.
pub fn spent(session: &Session) -> Option<Cost> {
    let price = price(session)?;
    Some(Cost {
        amount: session.spent(),
        currency: price.currency().to_string(),
    })
}

fn price(session: &Session) -> Option<Price> {
    let model = session.state().settings.model.clone();
    session.ctx().model(&model)?.price.clone()
}

/// Tells the client how full the context window is (`used` of `size` tokens), and what the
/// session spent.
pub fn report_fill(
    sink: &dyn EventSink,
    used: u64,
    size: u64,
    request: Option<Usage>,
    cost: Option<Cost>,
) {
    let event = SessionEvent::Usage {
        used,
        size,
        request,
        cost,
    };
    sink.emit(event, Visibility::Live);
}

/// Most deltas merged into one chunk: bounds a frame's size (and so the latency of its text).
const MERGE_LIMIT: usize = 16 * 1024;

/// Merges the text (or reasoning) deltas that are already waiting behind `first` into one,
/// so a fast stream costs a frame per batch rather than per token — without waiting for
/// anything. Returns the merged event and the first event that could not be merged (or the
/// end of the stream), which the caller handles next.
pub fn merge_ready(
    first: StreamEvent,
    events: &mut EventStream,
) -> (StreamEvent, Option<Option<Result<StreamEvent, LlmError>>>) {
    let mut merged = first;
    loop {
        let (StreamEvent::Text(text) | StreamEvent::Reasoning(text)) = &mut merged else {
            return (merged, None);
        };
        if text.len() >= MERGE_LIMIT {
            return (merged, None);
        }
        let Some(next) = events.next().now_or_never() else {
            return (merged, None);
        };
        match (&mut merged, next) {
            (StreamEvent::Text(text), Some(Ok(StreamEvent::Text(more))))
            | (StreamEvent::Reasoning(text), Some(Ok(StreamEvent::Reasoning(more)))) => {
                text.push_str(&more)
            }
            (_, other) => return (merged, Some(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_costs_its_tokens_at_their_prices() {
        let price = Price {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: None,
            currency: None,
        };
        let usage = Usage {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_write: 10_000,
            ..Usage::default()
        };
        let cost = cost(&price, &usage);
        assert!((cost - (3.0 + 1.5 + 0.6 + 0.03)).abs() < 1e-9, "{cost}");
        assert_eq!(price.currency(), "USD");
    }
}
