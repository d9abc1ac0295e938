//! Anthropic Messages, streamed: text, tool use, and thinking — whose blocks, signed, must
//! come back verbatim inside a tool loop.

use std::collections::VecDeque;
use std::time::Duration;

use eventsource_stream::Event;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::http::Transport;
use super::retry::Failure;
use super::sse::{self, Decode, Flow};
use super::{
    AssistantPart, ChatRequest, EventStream, FinishReason, LlmError, Message, Provider,
    StreamEvent, ThoughtLevel, ToolResult, Usage,
};
use crate::config::{ANTHROPIC_API_KEY_ENV, Endpoint};

const API_VERSION: &str = "2023-06-01";
/// Room for the visible answer. Thinking comes on top, since its budget counts against
/// `max_tokens`; at most 16 384 + 8 192, within every thinking model's output limit.
const ANSWER_TOKENS: u64 = 8192;

pub struct Anthropic {
    transport: Transport,
    endpoint: Endpoint,
}

impl Anthropic {
    pub fn new(endpoint: Endpoint, idle_timeout: Duration) -> Self {
        Anthropic {
            transport: Transport::new(idle_timeout, endpoint.max_retries),
            endpoint,
        }
    }
}

/// The thinking budget for a thought level; `None` leaves thinking off.
fn thinking_budget(level: ThoughtLevel) -> Option<u64> {
    match level {
        ThoughtLevel::Off => None,
        ThoughtLevel::Low => Some(1024),
        ThoughtLevel::Medium => Some(4096),
        ThoughtLevel::High => Some(16384),
    }
}

/// Marks a prompt-cache breakpoint: everything up to this block is cached for five minutes,
/// so each step of a tool loop re-reads the conversation at a tenth of the price.
fn cached(mut block: Value) -> Value {
    block["cache_control"] = json!({ "type": "ephemeral" });
    block
}

fn body(request: &ChatRequest) -> Value {
    let budget = request.thought_level.and_then(thinking_budget);
    let mut body = json!({
        "model": request.model,
        "max_tokens": ANSWER_TOKENS + budget.unwrap_or(0),
        "messages": wire_messages(&request.messages),
        "stream": true,
    });
    if !request.system.is_empty() {
        // Tools precede the system prompt in the cache's order, so this caches both.
        body["system"] = json!([cached(json!({ "type": "text", "text": request.system }))]);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters }))
            .collect();
        body["tools"] = Value::Array(tools);
    }
    if let Some(budget) = budget {
        body["thinking"] = json!({ "type": "enabled", "budget_tokens": budget });
    }
    body
}

/// The conversation as Messages API turns. The API wants user and assistant turns to
/// alternate, so consecutive messages of one role (tool results then the next prompt, or
/// two prompts around a turn that produced nothing) become one turn.
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks): (&str, Vec<Value>) = match message {
            Message::User { text } => ("user", text_block(text).into_iter().collect()),
            Message::Assistant { parts } => (
                "assistant",
                parts.iter().filter_map(assistant_block).collect(),
            ),
            Message::ToolResults { results } => {
                ("user", results.iter().map(tool_result_block).collect())
            }
        };
        match turns.last_mut() {
            _ if blocks.is_empty() => {}
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    // The newest prompt or tool result ends the cached prefix the next request reads.
    if let Some((_, content)) = turns.last_mut()
        && let Some(last) = content.last_mut()
        && matches!(last["type"].as_str(), Some("text" | "tool_result"))
    {
        *last = cached(last.take());
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// The API refuses empty text blocks.
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({ "type": "text", "text": text }))
}

fn assistant_block(part: &AssistantPart) -> Option<Value> {
    match part {
        AssistantPart::Text { text } => text_block(text),
        AssistantPart::Thinking {
            text,
            signature: Some(signature),
        } => Some(json!({ "type": "thinking", "thinking": text, "signature": signature })),
        // Thinking without a signature (another provider's, or a cut stream) would be
        // refused; the model does not need it back.
        AssistantPart::Thinking {
            signature: None, ..
        } => None,
        AssistantPart::RedactedThinking { data } => {
            Some(json!({ "type": "redacted_thinking", "data": data }))
        }
        AssistantPart::ToolCall {
            id,
            name,
            arguments,
        } => Some(
            json!({ "type": "tool_use", "id": id, "name": name, "input": tool_input(arguments) }),
        ),
    }
}

/// The API wants the input as an object; arguments the model garbled (its tool call already
/// failed with a tool error saying so) are sent as an empty one.
fn tool_input(arguments: &str) -> Value {
    serde_json::from_str::<Value>(arguments)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}))
}

fn tool_result_block(result: &ToolResult) -> Value {
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "is_error": result.is_error,
    });
    // Empty content is refused next to `is_error`; leaving it out is always accepted.
    if !result.content.is_empty() {
        block["content"] = json!(result.content);
    }
    block
}

impl Provider for Anthropic {
    /// A key, or a server of the user's own choosing (a proxy may hold the key itself).
    fn has_credential(&self) -> bool {
        self.endpoint.api_key.is_some() || !self.endpoint.default_base_url
    }

    fn stream(&self, request: ChatRequest) -> BoxFuture<'static, Result<EventStream, LlmError>> {
        let url = format!("{}/messages", self.endpoint.base_url.trim_end_matches('/'));
        let body = body(&request);
        self.transport.stream::<Decoder>(|client| {
            let call = client
                .post(url)
                .header("anthropic-version", API_VERSION)
                .json(&body);
            match &self.endpoint.api_key {
                Some(key) => call.header("x-api-key", key.expose()),
                None => call,
            }
        })
    }
}

/// The content block taking deltas. Blocks stream one after another, never interleaved.
enum Block {
    Text,
    Thinking {
        signature: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
    /// Redacted thinking (whole at its start) and block types Hearth does not use.
    Other,
}

/// Messages stream events to model events. Usage and the stop reason are handed on at
/// `message_stop`, the only sign that the answer is complete.
#[derive(Default)]
struct Decoder {
    block: Option<Block>,
    usage: Usage,
    stop: Option<FinishReason>,
}

impl Decode for Decoder {
    fn event(&mut self, event: &Event, out: &mut VecDeque<StreamEvent>) -> Result<Flow, Failure> {
        let data = sse::json(event)?;
        match data["type"].as_str().unwrap_or_default() {
            "message_start" => self.read_usage(&data["message"]["usage"]),
            "content_block_start" => self.start_block(&data["content_block"], out),
            "content_block_delta" => self.delta(&data["delta"], out),
            "content_block_stop" => self.stop_block(out),
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop = Some(stop_reason(reason));
                }
                self.read_usage(&data["usage"]);
            }
            "message_stop" => {
                out.push_back(StreamEvent::Usage(self.usage));
                let stop = self.stop.take().unwrap_or(FinishReason::Stop);
                out.push_back(StreamEvent::Finish(stop));
                return Ok(Flow::Done);
            }
            "error" => return Err(stream_error(&data["error"])),
            // `ping`, and event types newer than this code.
            _ => {}
        }
        Ok(Flow::More)
    }

    fn end(&mut self, _out: &mut VecDeque<StreamEvent>) -> Result<(), Failure> {
        Err(sse::incomplete())
    }
}

impl Decoder {
    /// `message_start` carries the input counts, `message_delta` the (cumulative) output.
    fn read_usage(&mut self, usage: &Value) {
        let fields = [
            ("input_tokens", &mut self.usage.input),
            ("output_tokens", &mut self.usage.output),
            ("cache_read_input_tokens", &mut self.usage.cache_read),
            ("cache_creation_input_tokens", &mut self.usage.cache_write),
        ];
        for (name, slot) in fields {
            if let Some(count) = usage[name].as_u64() {
                *slot = count;
            }
        }
    }

    fn start_block(&mut self, block: &Value, out: &mut VecDeque<StreamEvent>) {
        let text = |name: &str| block[name].as_str().unwrap_or_default().to_string();
        self.block = Some(match block["type"].as_str().unwrap_or_default() {
            "text" => {
                push_text(out, StreamEvent::Text(text("text")));
                Block::Text
            }
            "thinking" => {
                push_text(out, StreamEvent::Reasoning(text("thinking")));
                Block::Thinking {
                    signature: text("signature"),
                }
            }
            "redacted_thinking" => {
                out.push_back(StreamEvent::RedactedThinking(text("data")));
                Block::Other
            }
            "tool_use" => Block::ToolUse {
                id: text("id"),
                name: text("name"),
                input: String::new(),
            },
            _ => Block::Other,
        });
    }

    fn delta(&mut self, delta: &Value, out: &mut VecDeque<StreamEvent>) {
        let text = |name: &str| delta[name].as_str().unwrap_or_default();
        match (delta["type"].as_str().unwrap_or_default(), &mut self.block) {
            ("text_delta", _) => push_text(out, StreamEvent::Text(text("text").to_string())),
            ("thinking_delta", _) => {
                push_text(out, StreamEvent::Reasoning(text("thinking").to_string()))
            }
            ("signature_delta", Some(Block::Thinking { signature })) => {
                signature.push_str(text("signature"))
            }
            ("input_json_delta", Some(Block::ToolUse { input, .. })) => {
                input.push_str(text("partial_json"))
            }
            _ => {}
        }
    }

    /// A thinking block closes with its signature; a tool call is whole once its block stops.
    fn stop_block(&mut self, out: &mut VecDeque<StreamEvent>) {
        match self.block.take() {
            Some(Block::Thinking { signature }) if !signature.is_empty() => {
                out.push_back(StreamEvent::ThinkingSignature(signature))
            }
            Some(Block::ToolUse { id, name, input }) => out.push_back(StreamEvent::ToolCall {
                id,
                name,
                arguments: sse::arguments(input),
            }),
            _ => {}
        }
    }
}

fn push_text(out: &mut VecDeque<StreamEvent>, event: StreamEvent) {
    if let StreamEvent::Text(text) | StreamEvent::Reasoning(text) = &event
        && text.is_empty()
    {
        return;
    }
    out.push_back(event);
}

fn stop_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

/// An `error` event. Overload and server errors are worth a retry while nothing has streamed.
fn stream_error(error: &Value) -> Failure {
    let kind = error["type"].as_str().unwrap_or_default();
    let message = error["message"].as_str().unwrap_or("unknown error");
    let error = LlmError::new(message);
    match kind {
        "overloaded_error" | "api_error" | "rate_limit_error" => Failure::retryable(error),
        _ => error.into(),
    }
}

/// How a user supplies the credential, for `authMethods` and auth errors.
pub fn credential_hint() -> String {
    format!(
        "Set {ANTHROPIC_API_KEY_ENV}, or point ANTHROPIC_BASE_URL at a proxy that holds the key; an embedding host can pass providers.anthropic.apiKey / baseUrl in the config"
    )
}
