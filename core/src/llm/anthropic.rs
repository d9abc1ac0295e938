//! Anthropic Messages, streamed: text, tool use, and thinking — whose blocks, signed, must
//! come back verbatim inside a tool loop — and the server-side web search
//! (`anthropic_search.rs`), whose blocks and cited text come back verbatim too. A
//! `pause_turn` stop is `FinishReason::Paused`: the turn sends the conversation back and the
//! model goes on from where it paused.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use super::anthropic_search;
use super::api_key::ApiKey;
use super::body::Body;
use super::error::Failure;
use super::http::Transport;
use super::sse::{self, Decode, Flow, Text};
use super::wire::{self, Encoded, Role};
use super::{ChatRequest, EventStream, FinishReason, LlmError, Provider, StreamEvent, Usage};
use crate::chat::{AssistantPart, Image, Message, ThoughtLevel, ToolResult, UserPart};
use crate::config::{ANTHROPIC_API_KEY_ENV, Endpoint, ProviderName};
use eventsource_stream::Event;

const API_VERSION: &str = "2023-06-01";
/// Room for the visible answer. Thinking comes on top, since its budget counts against
/// `max_tokens`; at most 16 384 + 8 192, within every thinking model's output limit.
const ANSWER_TOKENS: u64 = 8192;

pub struct Anthropic {
    transport: Transport,
    endpoint: Endpoint,
    key: Arc<ApiKey>,
}

impl Anthropic {
    pub fn new(endpoint: Endpoint, idle_timeout: Duration) -> Self {
        Anthropic {
            transport: Transport::new(idle_timeout, endpoint.max_retries),
            key: Arc::new(ApiKey::new(endpoint.api_key.clone())),
            endpoint,
        }
    }

    /// The key every request reads, which a sign-in may set while the engine runs.
    pub fn key(&self) -> Arc<ApiKey> {
        self.key.clone()
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

/// What a body carries before its messages, in the order it is sent: serialized from the
/// request's own parts (the tools' schemas are shared, never copied into a JSON tree).
#[derive(serde::Serialize)]
struct Head<'a> {
    model: &'a str,
    max_tokens: u64,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<[SystemBlock<'a>; 1]>,
}

#[derive(serde::Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u64,
}

#[derive(serde::Serialize)]
#[serde(untagged)]
enum Tool<'a> {
    Custom {
        name: &'a str,
        description: &'a str,
        input_schema: &'a Value,
    },
    /// Anthropic's own (`anthropic_search.rs`).
    Server(Value),
}

/// The system prompt, marked as a prompt-cache breakpoint: everything up to it (the tools
/// too, which precede it in the cache's order) is cached for five minutes, so each step of a
/// tool loop re-reads it at a tenth of the price.
#[derive(serde::Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

#[derive(serde::Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The body's JSON text, the conversation last (see `openai.rs`); only the messages added
/// since the session's previous request are encoded (`wire.rs`).
fn body(request: &ChatRequest) -> Body {
    let budget = request.thought_level.and_then(thinking_budget);
    let mut tools: Vec<Tool> = (request.tools.iter())
        .map(|t| Tool::Custom {
            name: &t.name,
            description: &t.description,
            input_schema: &t.parameters,
        })
        .collect();
    tools.extend(
        request
            .hosted_search
            .as_ref()
            .map(|search| Tool::Server(anthropic_search::tool(search))),
    );
    let head = Head {
        model: &request.model,
        max_tokens: ANSWER_TOKENS + budget.unwrap_or(0),
        stream: true,
        thinking: budget.map(|budget_tokens| Thinking {
            kind: "enabled",
            budget_tokens,
        }),
        tools,
        system: (!request.system.is_empty()).then(|| {
            [SystemBlock {
                kind: "text",
                text: &request.system,
                cache_control: CacheControl { kind: "ephemeral" },
            }]
        }),
    };
    let dialect = wire::Dialect {
        provider: ProviderName::Anthropic,
        images: request.images,
    };
    wire::with_encoded(
        &request.wire,
        dialect,
        (request.earlier, &request.messages),
        encode,
        |encoded| wire::body_with_messages(&head, vec![encoded.turns()]),
    )
}

/// A message's content blocks, each as JSON text.
fn encode(message: &Message) -> Encoded {
    let (role, blocks): (Role, Vec<Value>) = match message {
        Message::User { content } => (Role::User, content.iter().filter_map(user_block).collect()),
        Message::Assistant { parts } => (
            Role::Assistant,
            parts.iter().filter_map(assistant_block).collect(),
        ),
        Message::ToolResults { results } => {
            (Role::User, results.iter().map(tool_result_block).collect())
        }
    };
    Encoded {
        role,
        parts: blocks.iter().map(Value::to_string).collect(),
    }
}

fn user_block(part: &UserPart) -> Option<Value> {
    match part {
        UserPart::Text { text } => text_block(text),
        UserPart::Image(image) => Some(image_block(image)),
    }
}

fn image_block(image: &Image) -> Value {
    json!({ "type": "image", "source": { "type": "base64", "media_type": image.mime_type, "data": image.data } })
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
        AssistantPart::ServerBlock { block } => Some(block.clone()),
        AssistantPart::CitedText { text, citations } => {
            Some(json!({ "type": "text", "text": text, "citations": citations }))
        }
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
    if !result.images.is_empty() {
        let mut content: Vec<Value> = text_block(&result.content).into_iter().collect();
        content.extend(result.images.iter().map(image_block));
        block["content"] = Value::Array(content);
    } else if !result.content.is_empty() {
        block["content"] = json!(result.content);
    }
    block
}

impl Provider for Anthropic {
    /// A key, or a server of the user's own choosing (a proxy may hold the key itself).
    fn has_credential(&self) -> bool {
        self.key.current().is_some() || !self.endpoint.default_base_url
    }

    fn name(&self) -> ProviderName {
        ProviderName::Anthropic
    }

    fn stream(&self, request: ChatRequest) -> BoxFuture<'static, Result<EventStream, LlmError>> {
        let url = format!("{}/messages", self.endpoint.base_url.trim_end_matches('/'));
        let body = body(&request);
        let key = self.key.current();
        let build = |client: &reqwest::Client| {
            let call = client
                .post(url)
                .header("anthropic-version", API_VERSION)
                .header(CONTENT_TYPE, "application/json");
            match &key {
                Some(key) => call.header("x-api-key", key.expose()),
                None => call,
            }
        };
        self.transport.stream::<Decoder>(build, body)
    }
}

/// The content block taking deltas. Blocks stream one after another, never interleaved.
enum Block {
    /// Its text is kept for the citations that may come with it.
    Text {
        text: String,
        citations: Vec<Value>,
    },
    Thinking {
        signature: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
    /// A call of a server tool (the web search): its start block, and its input streaming.
    ServerToolUse {
        block: Value,
        input: String,
    },
    /// Redacted thinking (whole at its start) and block types Hearth does not use.
    Other,
}

/// The event of nearly every streamed token — a text or thinking delta — read without
/// building a JSON tree: the hot path. Another event, a delta of another type or a field not
/// as expected fails to parse or is not handled there, and takes the general path. The floor
/// of a streamed token in `benches/turn.rs` parses into it.
#[derive(serde::Deserialize)]
pub struct TextDeltaEvent<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    delta: Option<TextDelta<'a>>,
}

#[derive(serde::Deserialize)]
struct TextDelta<'a> {
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    #[serde(borrow)]
    text: Option<Text<'a>>,
    #[serde(borrow)]
    thinking: Option<Text<'a>>,
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
        if let Ok(TextDeltaEvent {
            kind: "content_block_delta",
            delta: Some(delta),
        }) = serde_json::from_str(&event.data)
        {
            let (text, thinking) = (
                delta.text.unwrap_or_default().0,
                delta.thinking.unwrap_or_default().0,
            );
            if self.streamed(delta.kind.unwrap_or_default(), text, thinking, out) {
                return Ok(Flow::More);
            }
        }
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
    /// `message_start` carries the input counts, `message_delta` the (cumulative) output and,
    /// on the last one, the part of it spent thinking.
    fn read_usage(&mut self, usage: &Value) {
        if let Some(thoughts) = usage
            .pointer("/output_tokens_details/thinking_tokens")
            .and_then(Value::as_u64)
        {
            self.usage.thoughts = Some(thoughts);
        }
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
                Block::Text {
                    text: text("text"),
                    citations: block["citations"].as_array().cloned().unwrap_or_default(),
                }
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
            "server_tool_use" => Block::ServerToolUse {
                block: block.clone(),
                input: String::new(),
            },
            // Whole at its start.
            "web_search_tool_result" => {
                out.push_back(StreamEvent::ServerBlock(block.clone()));
                out.push_back(StreamEvent::Search(anthropic_search::finished(block)));
                Block::Other
            }
            _ => Block::Other,
        });
    }

    fn delta(&mut self, delta: &Value, out: &mut VecDeque<StreamEvent>) {
        let text = |name: &str| delta[name].as_str().unwrap_or_default();
        let kind = delta["type"].as_str().unwrap_or_default();
        if self.streamed(kind, text("text").into(), text("thinking").into(), out) {
            return;
        }
        match (kind, &mut self.block) {
            ("citations_delta", Some(Block::Text { citations, .. })) => {
                citations.push(delta["citation"].clone())
            }
            ("signature_delta", Some(Block::Thinking { signature })) => {
                signature.push_str(text("signature"))
            }
            ("input_json_delta", Some(Block::ToolUse { input, .. }))
            | ("input_json_delta", Some(Block::ServerToolUse { input, .. })) => {
                input.push_str(text("partial_json"))
            }
            _ => {}
        }
    }

    /// A text or thinking delta of `kind` (its `text` or `thinking` field, taken as parsed
    /// so that text already owned is not copied again): false for any other kind of delta,
    /// which the caller handles.
    fn streamed(
        &mut self,
        kind: &str,
        text: Cow<'_, str>,
        thinking: Cow<'_, str>,
        out: &mut VecDeque<StreamEvent>,
    ) -> bool {
        match kind {
            "text_delta" => {
                // The block's text is kept for the citations that may come with it.
                if let Some(Block::Text { text: kept, .. }) = &mut self.block {
                    kept.push_str(&text);
                }
                push_text(out, StreamEvent::Text(text.into_owned()));
            }
            "thinking_delta" => push_text(out, StreamEvent::Reasoning(thinking.into_owned())),
            _ => return false,
        }
        true
    }

    /// A thinking block closes with its signature; a tool call is whole once its block stops,
    /// and so is a text's list of citations.
    fn stop_block(&mut self, out: &mut VecDeque<StreamEvent>) {
        match self.block.take() {
            Some(Block::Text { text, citations }) if !citations.is_empty() => {
                out.push_back(StreamEvent::CitedText { text, citations })
            }
            Some(Block::ServerToolUse { mut block, input }) => {
                block["input"] = tool_input(&input);
                out.extend(anthropic_search::started(&block).map(StreamEvent::Search));
                out.push_back(StreamEvent::ServerBlock(block));
            }
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
        "pause_turn" => FinishReason::Paused,
        other => FinishReason::Other(other.to_string()),
    }
}

/// An `error` event. Overload and server errors are worth a retry while nothing has streamed.
fn stream_error(error: &Value) -> Failure {
    let kind = error["type"].as_str().unwrap_or_default();
    let message = error["message"].as_str().unwrap_or("unknown error");
    let error = LlmError {
        code: (!kind.is_empty()).then(|| kind.to_string()),
        ..LlmError::new(message)
    };
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::ToolSpec;
    use crate::llm::testing::{self, IDLE_TIMEOUT};

    fn data(value: Value) -> String {
        value.to_string()
    }

    fn start(index: u32, block: Value) -> String {
        data(json!({ "type": "content_block_start", "index": index, "content_block": block }))
    }

    fn delta(index: u32, delta: Value) -> String {
        data(json!({ "type": "content_block_delta", "index": index, "delta": delta }))
    }

    fn stop(index: u32) -> String {
        data(json!({ "type": "content_block_stop", "index": index }))
    }

    #[tokio::test]
    async fn streams_thinking_redacted_text_and_tool_use_in_order() {
        let mock = testing::mock(json!([{ "events": [
            { "reasoning": "The user wants " },
            { "reasoning": "a file.", "signature": "sig-1" },
            { "redactedThinking": "opaque-blob" },
            { "text": "Let me " },
            { "text": "look." },
            { "toolCall": { "id": "toolu_1", "name": "read", "arguments": "{\"path\":\"src/main.rs\"}", "chunks": 3 } },
            { "usage": { "input": 120, "output": 30 } },
        ]}]));
        let provider = Anthropic::new(testing::endpoint(&mock, 0), IDLE_TIMEOUT);
        let (events, error) =
            testing::run(&provider, testing::request(testing::prompt("hi"))).await;
        assert_eq!(error, None);
        assert_eq!(
            events,
            [
                StreamEvent::Reasoning("The user wants ".into()),
                StreamEvent::Reasoning("a file.".into()),
                StreamEvent::ThinkingSignature("sig-1".into()),
                StreamEvent::RedactedThinking("opaque-blob".into()),
                StreamEvent::Text("Let me ".into()),
                StreamEvent::Text("look.".into()),
                StreamEvent::ToolCall {
                    id: "toolu_1".into(),
                    name: "read".into(),
                    arguments: r#"{"path":"src/main.rs"}"#.into(),
                },
                StreamEvent::Usage(Usage {
                    input: 120,
                    output: 30,
                    ..Usage::default()
                }),
                StreamEvent::Finish(FinishReason::ToolCalls),
            ]
        );
        let sent = &mock.requests()[0];
        assert_eq!(sent.path, "/v1/messages");
        assert_eq!(sent.headers["x-api-key"], "test-key");
        assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
        assert!(sent.headers["content-type"].starts_with("application/json"));
        assert!(!sent.headers.contains_key("authorization"));
    }

    #[test]
    fn deltas_with_escapes_unknown_fields_or_other_types_are_read_as_before() {
        let events = testing::feed::<Decoder>([
            data(json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5 } } })),
            start(0, json!({ "type": "thinking", "thinking": "" })),
            delta(0, json!({ "type": "thinking_delta", "thinking": "hm \"quoted\"" })),
            delta(0, json!({ "type": "signature_delta", "signature": "sig" })),
            stop(0),
            start(1, json!({ "type": "text", "text": "" })),
            // Fields this code does not know, beside and inside the delta.
            data(json!({ "type": "content_block_delta", "index": 1, "future": [1, 2],
                         "delta": { "type": "text_delta", "text": "line\n", "extra": { "x": null } } })),
            // A text that is no string streams nothing, as before.
            delta(1, json!({ "type": "text_delta", "text": 7 })),
            delta(1, json!({ "type": "citations_delta", "citation": { "url": "u" } })),
            stop(1),
            start(2, json!({ "type": "tool_use", "id": "toolu_1", "name": "read", "input": {} })),
            delta(2, json!({ "type": "input_json_delta", "partial_json": "{\"path\":" })),
            delta(2, json!({ "type": "input_json_delta", "partial_json": "\"a\"}" })),
            stop(2),
            data(json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" },
                         "usage": { "output_tokens": 9 } })),
            data(json!({ "type": "message_stop" })),
        ])
        .unwrap();
        assert_eq!(
            events,
            [
                StreamEvent::Reasoning("hm \"quoted\"".into()),
                StreamEvent::ThinkingSignature("sig".into()),
                StreamEvent::Text("line\n".into()),
                StreamEvent::CitedText {
                    text: "line\n".into(),
                    citations: vec![json!({ "url": "u" })],
                },
                StreamEvent::ToolCall {
                    id: "toolu_1".into(),
                    name: "read".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                },
                StreamEvent::Usage(Usage {
                    input: 5,
                    output: 9,
                    ..Usage::default()
                }),
                StreamEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }

    #[tokio::test]
    async fn the_request_maps_a_tool_loop_with_signed_thinking() {
        let mock = testing::mock(json!([{ "events": [{ "text": "Both read." }] }]));
        let provider = Anthropic::new(testing::endpoint(&mock, 0), IDLE_TIMEOUT);
        let mut request = testing::request(vec![
            Message::user_text("Read a and b"),
            Message::Assistant {
                parts: vec![
                    AssistantPart::Thinking {
                        text: "Two files.".into(),
                        signature: Some("sig-1".into()),
                    },
                    AssistantPart::RedactedThinking {
                        data: "opaque".into(),
                    },
                    AssistantPart::Text {
                        text: "Reading.".into(),
                    },
                    AssistantPart::ToolCall {
                        id: "toolu_1".into(),
                        name: "read".into(),
                        arguments: r#"{"path":"a"}"#.into(),
                    },
                    AssistantPart::ToolCall {
                        id: "toolu_2".into(),
                        name: "read".into(),
                        arguments: r#"{"path":"b"}"#.into(),
                    },
                ],
            },
            Message::ToolResults {
                results: vec![
                    ToolResult::text("toolu_1".into(), "read".into(), "A".into(), false),
                    ToolResult::text(
                        "toolu_2".into(),
                        "read".into(),
                        "no such file: b".into(),
                        true,
                    ),
                ],
            },
            // A turn cancelled after the tools ran: the next prompt joins the results' turn.
            Message::user_text("Never mind b."),
        ]);
        request.tools = vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({ "type": "object" }).into(),
        }];
        request.thought_level = Some(ThoughtLevel::Medium);
        let (_, error) = testing::run(&provider, request).await;
        assert_eq!(error, None);
        // The head's members in the order they go out (the prompt cache matches on bytes).
        let head = concat!(
            r#"{"model":"test-model","max_tokens":12288,"stream":true,"#,
            r#""thinking":{"type":"enabled","budget_tokens":4096},"tools":[{"name":"read","#,
            r#""description":"Read a file","input_schema":{"type":"object"}}],"system":[{"#,
            r#""type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],"#,
            r#""messages":["#,
        );
        let raw = &mock.requests()[0].raw;
        assert!(raw.starts_with(head), "{raw}");
        let body = &mock.requests()[0].body;
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["stream"], true);
        assert_eq!(
            body["system"],
            json!([{ "type": "text", "text": "Be brief.", "cache_control": { "type": "ephemeral" } }])
        );
        assert_eq!(
            body["tools"],
            json!([{ "name": "read", "description": "Read a file", "input_schema": { "type": "object" } }])
        );
        assert_eq!(
            body["thinking"],
            json!({ "type": "enabled", "budget_tokens": 4096 })
        );
        assert_eq!(body["max_tokens"], 4096 + 8192);
        assert_eq!(
            body["messages"],
            json!([
                { "role": "user", "content": [{ "type": "text", "text": "Read a and b",
                    "cache_control": { "type": "ephemeral" } }] },
                { "role": "assistant", "content": [
                    { "type": "thinking", "thinking": "Two files.", "signature": "sig-1" },
                    { "type": "redacted_thinking", "data": "opaque" },
                    { "type": "text", "text": "Reading." },
                    { "type": "tool_use", "id": "toolu_1", "name": "read", "input": { "path": "a" } },
                    { "type": "tool_use", "id": "toolu_2", "name": "read", "input": { "path": "b" } },
                ] },
                { "role": "user", "content": [
                    { "type": "tool_result", "tool_use_id": "toolu_1", "content": "A", "is_error": false },
                    { "type": "tool_result", "tool_use_id": "toolu_2", "content": "no such file: b", "is_error": true },
                    { "type": "text", "text": "Never mind b.", "cache_control": { "type": "ephemeral" } },
                ] },
            ])
        );
    }

    /// The `messages` of the body of a request of `messages`.
    fn wire_messages(messages: Vec<Message>) -> Value {
        let body: Value = serde_json::from_str(&body(&testing::request(messages)).text()).unwrap();
        body["messages"].clone()
    }

    #[test]
    fn what_the_api_would_refuse_is_left_out() {
        let messages = wire_messages(vec![
            Message::user_text("hi"),
            Message::Assistant {
                parts: vec![
                    // Another provider's reasoning carries no signature.
                    AssistantPart::Thinking {
                        text: "hm".into(),
                        signature: None,
                    },
                    AssistantPart::Text {
                        text: String::new(),
                    },
                ],
            },
            Message::user_text("again"),
            Message::Assistant {
                parts: vec![AssistantPart::ToolCall {
                    id: "t".into(),
                    name: "list".into(),
                    arguments: "not json".into(),
                }],
            },
            Message::ToolResults {
                results: vec![ToolResult::text(
                    "t".into(),
                    "list".into(),
                    String::new(),
                    true,
                )],
            },
        ]);
        assert_eq!(
            messages,
            json!([
                { "role": "user", "content": [
                    { "type": "text", "text": "hi" },
                    { "type": "text", "text": "again", "cache_control": { "type": "ephemeral" } },
                ] },
                { "role": "assistant", "content": [
                    { "type": "tool_use", "id": "t", "name": "list", "input": {} },
                ] },
                { "role": "user", "content": [
                    { "type": "tool_result", "tool_use_id": "t", "is_error": true,
                      "cache_control": { "type": "ephemeral" } },
                ] },
            ])
        );
    }

    /// The API allows four breakpoints: the system prompt's and a rolling pair on the two
    /// newest user turns, however long the conversation.
    #[test]
    fn a_long_conversation_keeps_three_breakpoints() {
        let mut messages = Vec::new();
        for i in 0..30 {
            messages.push(Message::user_text(format!("step {i}")));
            messages.push(Message::Assistant {
                parts: vec![AssistantPart::Text {
                    text: format!("done {i}"),
                }],
            });
        }
        messages.push(Message::user_text("last"));
        let text = body(&testing::request(messages)).text();
        assert_eq!(text.matches("cache_control").count(), 3, "{text}");
        let body: Value = serde_json::from_str(&text).unwrap();
        let turns = body["messages"].as_array().unwrap();
        let marked = |turn: &Value| turn["content"][0].get("cache_control").is_some();
        assert!(marked(&turns[turns.len() - 1]));
        assert!(marked(&turns[turns.len() - 3]));
    }

    #[test]
    fn thinking_budget_follows_the_thought_level() {
        let body_for = |level| {
            let mut request = testing::request(testing::prompt("hi"));
            request.thought_level = level;
            serde_json::from_str::<Value>(&body(&request).text()).unwrap()
        };
        for (level, budget) in [
            (ThoughtLevel::Low, 1024),
            (ThoughtLevel::Medium, 4096),
            (ThoughtLevel::High, 16384),
        ] {
            let body = body_for(Some(level));
            assert_eq!(
                body["thinking"],
                json!({ "type": "enabled", "budget_tokens": budget })
            );
            assert!(body["max_tokens"].as_u64().unwrap() > budget);
        }
        for level in [Some(ThoughtLevel::Off), None] {
            let body = body_for(level);
            assert!(body.get("thinking").is_none(), "{level:?}");
            assert_eq!(body["max_tokens"], 8192);
        }
    }

    #[test]
    fn cache_usage_stop_reasons_and_stream_errors() {
        let start = data(json!({ "type": "message_start", "message": { "usage": {
            "input_tokens": 5, "output_tokens": 1,
            "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100,
        } } }));
        let finish = |reason: &str| {
            vec![
                start.clone(),
                data(json!({ "type": "ping" })),
                data(
                    json!({ "type": "message_delta", "delta": { "stop_reason": reason }, "usage": { "output_tokens": 42, "output_tokens_details": { "thinking_tokens": 30 } } }),
                ),
                data(json!({ "type": "message_stop" })),
            ]
        };
        let events = testing::feed::<Decoder>(finish("max_tokens")).unwrap();
        assert_eq!(
            events,
            [
                StreamEvent::Usage(Usage {
                    input: 5,
                    output: 42,
                    cache_read: 900,
                    cache_write: 100,
                    thoughts: Some(30),
                }),
                StreamEvent::Finish(FinishReason::Length),
            ]
        );
        for (reason, expected) in [
            ("end_turn", FinishReason::Stop),
            ("stop_sequence", FinishReason::Stop),
            ("tool_use", FinishReason::ToolCalls),
            ("refusal", FinishReason::ContentFilter),
            ("pause_turn", FinishReason::Paused),
            (
                "model_context_window_exceeded",
                FinishReason::Other("model_context_window_exceeded".into()),
            ),
        ] {
            let events = testing::feed::<Decoder>(finish(reason)).unwrap();
            assert_eq!(events[1], StreamEvent::Finish(expected));
        }

        let overloaded = data(
            json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
        );
        let failure = testing::feed::<Decoder>([start.clone(), overloaded]).unwrap_err();
        assert_eq!(failure.error.message, "Overloaded");
        assert!(failure.retryable);
        let invalid = data(
            json!({ "type": "error", "error": { "type": "invalid_request_error", "message": "bad" } }),
        );
        assert!(!testing::feed::<Decoder>([invalid]).unwrap_err().retryable);

        // A tool call still streaming when the body ends is never handed on.
        let cut = testing::feed::<Decoder>([
            start,
            data(
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "tool_use", "id": "t", "name": "read", "input": {} } }),
            ),
            data(
                json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": "{\"pa" } }),
            ),
        ]);
        assert!(cut.unwrap_err().error.message.contains("ended before"));
    }

    #[test]
    fn server_search_blocks_and_citations_are_kept_whole() {
        let result = json!({ "type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
            "content": [{ "type": "web_search_result", "url": "https://tokio.rs/", "title": "Tokio", "encrypted_content": "enc" }] });
        let citation = json!({ "type": "web_search_result_location", "url": "https://tokio.rs/",
            "title": "Tokio", "cited_text": "A runtime.", "encrypted_index": "idx" });
        let events = testing::feed::<Decoder>([
            data(json!({ "type": "message_start", "message": { "usage": { "input_tokens": 5 } } })),
            start(0, json!({ "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {} })),
            delta(0, json!({ "type": "input_json_delta", "partial_json": "{\"query\": " })),
            delta(0, json!({ "type": "input_json_delta", "partial_json": "\"tokio\"}" })),
            stop(0),
            start(1, result.clone()),
            stop(1),
            start(2, json!({ "type": "text", "text": "" })),
            delta(2, json!({ "type": "citations_delta", "citation": citation })),
            delta(2, json!({ "type": "text_delta", "text": "Tokio is a runtime." })),
            stop(2),
            data(json!({ "type": "message_delta", "delta": { "stop_reason": "pause_turn" }, "usage": { "output_tokens": 9 } })),
            data(json!({ "type": "message_stop" })),
        ])
        .unwrap();
        assert_eq!(
            events[..5],
            [
                StreamEvent::Search(crate::llm::SearchEvent::Started {
                    id: "srvtoolu_1".into(),
                    query: "tokio".into(),
                }),
                StreamEvent::ServerBlock(
                    json!({ "type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": { "query": "tokio" } })
                ),
                StreamEvent::ServerBlock(result.clone()),
                StreamEvent::Search(anthropic_search::finished(&result)),
                StreamEvent::Text("Tokio is a runtime.".into()),
            ]
        );
        assert_eq!(
            events[5],
            StreamEvent::CitedText {
                text: "Tokio is a runtime.".into(),
                citations: vec![citation],
            }
        );
        assert_eq!(events[7], StreamEvent::Finish(FinishReason::Paused));
    }

    #[tokio::test]
    async fn an_error_status_carries_the_api_message() {
        let mock = testing::mock(json!([{ "status": 400, "error": "max_tokens: too large" }]));
        let provider = Anthropic::new(testing::endpoint(&mock, 3), IDLE_TIMEOUT);
        let (events, error) =
            testing::run(&provider, testing::request(testing::prompt("hi"))).await;
        assert!(events.is_empty());
        assert_eq!(
            error,
            Some(LlmError {
                message: "max_tokens: too large".into(),
                status: Some(400),
                code: Some("invalid_request_error".into()),
                ..LlmError::default()
            })
        );
        assert_eq!(mock.requests().len(), 1, "a bad request is not retried");
    }

    #[tokio::test]
    async fn overloaded_is_retried() {
        let mock = testing::mock(json!([
            { "status": 529, "error": "Overloaded" },
            { "events": [{ "text": "Hello." }] },
        ]));
        let provider = Anthropic::new(testing::endpoint(&mock, 3), IDLE_TIMEOUT);
        let (events, error) =
            testing::run(&provider, testing::request(testing::prompt("hi"))).await;
        assert_eq!(error, None);
        assert_eq!(events[0], StreamEvent::Text("Hello.".into()));
        assert_eq!(mock.requests().len(), 2);
    }

    #[test]
    fn a_credential_or_a_server_of_ones_own() {
        let endpoint = |key: Option<&str>, default_base_url| Endpoint {
            base_url: "https://api.anthropic.com/v1".into(),
            api_key: key.map(crate::config::Secret::new),
            default_base_url,
            max_retries: 0,
        };
        let has = |e| Anthropic::new(e, IDLE_TIMEOUT).has_credential();
        assert!(has(endpoint(Some("k"), true)));
        assert!(has(endpoint(None, false)));
        assert!(!has(endpoint(None, true)));
    }
}
