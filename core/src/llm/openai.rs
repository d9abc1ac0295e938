//! OpenAI-compatible chat completions, streamed (OpenAI, Ollama, vLLM, llama.cpp server,
//! LM Studio, OpenRouter, Groq…).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use super::api_key::ApiKey;
use super::body::Body;
use super::error::Failure;
use super::http::Transport;
use super::sse::{self, Decode, Flow, Text};
use super::wire::{self, Encoded, Role};
use super::{ChatRequest, EventStream, FinishReason, LlmError, Provider, StreamEvent, Usage};
use crate::chat::{AssistantPart, Image, Message, ThoughtLevel, ToolResult, UserPart};
use crate::config::{Endpoint, OPENAI_API_KEY_ENV, ProviderName};
use eventsource_stream::Event;

pub struct OpenAi {
    transport: Transport,
    endpoint: Endpoint,
    key: Arc<ApiKey>,
}

impl OpenAi {
    pub fn new(endpoint: Endpoint, idle_timeout: Duration) -> Self {
        OpenAi {
            transport: Transport::new(idle_timeout, endpoint.max_retries),
            key: Arc::new(ApiKey::new(endpoint.api_key.clone())),
            endpoint,
        }
    }

    /// The key every request reads, which a sign-in may set while the engine runs.
    pub fn key(&self) -> Arc<ApiKey> {
        self.key.clone()
    }

    /// The body's JSON text. The conversation comes last, after everything that stays put
    /// within a session, so that each request of a session is the previous one with messages
    /// appended, byte for byte (the provider's prompt cache matches on that prefix); only
    /// the messages added since the previous request are encoded (`wire.rs`).
    fn body(request: &ChatRequest) -> Body {
        let head = Head {
            model: &request.model,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            reasoning_effort: request.thought_level.and_then(reasoning_effort),
            tools: (request.tools.iter())
                .map(|t| FunctionTool {
                    kind: "function",
                    function: Function {
                        name: &t.name,
                        description: &t.description,
                        parameters: &t.parameters,
                    },
                })
                .collect(),
        };
        let system = json!({ "role": "system", "content": &*request.system }).to_string();
        let system = Bytes::from(system);
        let encode = |message: &Message| Encoded {
            role: Role::Own,
            parts: wire_messages(message)
                .iter()
                .map(Value::to_string)
                .collect(),
        };
        let dialect = wire::Dialect {
            provider: ProviderName::Openai,
            images: request.images,
        };
        wire::with_encoded(
            &request.wire,
            dialect,
            (request.earlier, &request.messages),
            encode,
            |encoded| {
                wire::body_with_messages(&head, vec![vec![system], encoded.pieces().to_vec()])
            },
        )
    }
}

/// What a body carries before its messages, in the order it is sent: serialized from the
/// request's own parts (the tools' schemas are shared, never copied into a JSON tree).
#[derive(serde::Serialize)]
struct Head<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<FunctionTool<'a>>,
}

#[derive(serde::Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(serde::Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(serde::Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// One conversation message as chat-completions messages (tool results are one message each).
/// Thinking and the blocks of Anthropic's server tools have no place in this API and are left out
/// (cited text is kept as text).
fn wire_messages(message: &Message) -> Vec<Value> {
    match message {
        Message::User { content } => {
            vec![json!({ "role": "user", "content": user_content(content) })]
        }
        Message::Assistant { parts } => {
            let text: String = parts
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::Text { text } | AssistantPart::CitedText { text, .. } => {
                        Some(text.as_str())
                    }
                    _ => None,
                })
                .collect();
            let calls: Vec<Value> = parts
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::ToolCall { id, name, arguments } => Some(json!({
                        "id": id, "type": "function", "function": { "name": name, "arguments": arguments },
                    })),
                    _ => None,
                })
                .collect();
            let mut wire = json!({ "role": "assistant", "content": text });
            if !calls.is_empty() {
                // Strict servers want `null`, not "", next to tool calls.
                if text.is_empty() {
                    wire["content"] = Value::Null;
                }
                wire["tool_calls"] = Value::Array(calls);
            }
            vec![wire]
        }
        Message::ToolResults { results } => {
            let mut wire: Vec<Value> = results
                .iter()
                .map(|r| json!({ "role": "tool", "tool_call_id": r.call_id, "content": r.content }))
                .collect();
            wire.extend(results.iter().filter_map(tool_images));
            wire
        }
    }
}

/// Text alone goes as a string (every compatible server takes that); with images, as parts.
fn user_content(content: &[UserPart]) -> Value {
    let texts: Option<Vec<&str>> = content
        .iter()
        .map(|part| match part {
            UserPart::Text { text } => Some(text.as_str()),
            UserPart::Image(_) => None,
        })
        .collect();
    if let Some(texts) = texts {
        return json!(texts.join("\n\n"));
    }
    let parts: Vec<Value> = content
        .iter()
        .map(|part| match part {
            UserPart::Text { text } => json!({ "type": "text", "text": text }),
            UserPart::Image(image) => image_part(image),
        })
        .collect();
    Value::Array(parts)
}

fn image_part(image: &Image) -> Value {
    let url = format!("data:{};base64,{}", image.mime_type, image.data);
    json!({ "type": "image_url", "image_url": { "url": url } })
}

/// A tool message carries text only, so the images a tool returned follow the results as a
/// user message that names the call.
fn tool_images(result: &ToolResult) -> Option<Value> {
    if result.images.is_empty() {
        return None;
    }
    let label = format!("The image(s) returned by tool call {}:", result.call_id);
    let mut parts = vec![json!({ "type": "text", "text": label })];
    parts.extend(result.images.iter().map(image_part));
    Some(json!({ "role": "user", "content": parts }))
}

fn reasoning_effort(level: ThoughtLevel) -> Option<&'static str> {
    match level {
        ThoughtLevel::Off => None,
        ThoughtLevel::Low => Some("low"),
        ThoughtLevel::Medium => Some("medium"),
        ThoughtLevel::High => Some("high"),
    }
}

impl Provider for OpenAi {
    /// A key, or a server of the user's own choosing: local servers (Ollama, llama.cpp,
    /// LM Studio) need none, and one that does will say so in its error.
    fn has_credential(&self) -> bool {
        self.key.current().is_some() || !self.endpoint.default_base_url
    }

    fn name(&self) -> ProviderName {
        ProviderName::Openai
    }

    fn stream(&self, request: ChatRequest) -> BoxFuture<'static, Result<EventStream, LlmError>> {
        let url = format!(
            "{}/chat/completions",
            self.endpoint.base_url.trim_end_matches('/')
        );
        let body = Self::body(&request);
        let key = self.key.current();
        let build = |client: &reqwest::Client| {
            let call = client.post(url).header(CONTENT_TYPE, "application/json");
            match &key {
                Some(key) => call.bearer_auth(key.expose()),
                None => call,
            }
        };
        self.transport.stream::<Decoder>(build, body)
    }
}

/// A tool call whose arguments are still streaming.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Chat-completion chunks to model events. Tool calls arrive as argument deltas keyed by
/// `index` (several calls may interleave); each is handed on whole once the model finished.
#[derive(Default)]
struct Decoder {
    calls: BTreeMap<u64, PartialCall>,
    finished: bool,
}

impl Decode for Decoder {
    fn event(&mut self, event: &Event, out: &mut VecDeque<StreamEvent>) -> Result<Flow, Failure> {
        let data = event.data.trim();
        if data == "[DONE]" {
            if !self.finished {
                self.finish(FinishReason::Stop, out)?;
            }
            return Ok(Flow::Done);
        }
        if data.is_empty() {
            return Ok(Flow::More);
        }
        match serde_json::from_str::<TextChunk>(data) {
            Ok(chunk) if chunk.is_plain() => chunk.emit(out),
            _ => self.chunk(&sse::json(event)?, out)?,
        }
        Ok(Flow::More)
    }

    /// Some servers close the stream after the finish reason without `[DONE]`.
    fn end(&mut self, _out: &mut VecDeque<StreamEvent>) -> Result<(), Failure> {
        if self.finished {
            Ok(())
        } else {
            Err(sse::incomplete())
        }
    }
}

/// The common chunk — one text or reasoning delta and nothing else — read without building
/// a JSON tree or allocating (its text is borrowed unless escaped): the hot path of every
/// streamed token. Anything else (no choice or several, usage, an error, a
/// finish, tool calls) fails to parse or is not plain, and takes the general path. The floor
/// of a streamed token in `benches/turn.rs` parses into it.
#[derive(serde::Deserialize)]
pub struct TextChunk<'a> {
    /// Exactly one: a list of any other length is not this chunk (and costs no `Vec`).
    #[serde(borrow)]
    choices: [TextChoice<'a>; 1],
    #[serde(default)]
    usage: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct TextChoice<'a> {
    #[serde(borrow)]
    delta: Option<TextDelta<'a>>,
    finish_reason: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct TextDelta<'a> {
    #[serde(borrow)]
    content: Option<Text<'a>>,
    #[serde(borrow)]
    reasoning_content: Option<Text<'a>>,
    #[serde(borrow)]
    reasoning: Option<Text<'a>>,
    tool_calls: Option<serde::de::IgnoredAny>,
}

impl TextChunk<'_> {
    /// A choice whose delta holds only text, with no usage, error, finish or tool call.
    fn is_plain(&self) -> bool {
        let [choice] = &self.choices;
        self.usage.is_none()
            && self.error.is_none()
            && choice.finish_reason.is_none()
            && choice
                .delta
                .as_ref()
                .is_some_and(|d| d.tool_calls.is_none())
    }

    fn emit(self, out: &mut VecDeque<StreamEvent>) {
        let [
            TextChoice {
                delta: Some(delta), ..
            },
        ] = self.choices
        else {
            return;
        };
        if let Some(Text(reasoning)) = delta
            .reasoning_content
            .or(delta.reasoning)
            .filter(|r| !r.0.is_empty())
        {
            out.push_back(StreamEvent::Reasoning(reasoning.into_owned()));
        }
        if let Some(Text(text)) = delta.content.filter(|t| !t.0.is_empty()) {
            out.push_back(StreamEvent::Text(text.into_owned()));
        }
    }
}

impl Decoder {
    fn chunk(&mut self, chunk: &Value, out: &mut VecDeque<StreamEvent>) -> Result<(), LlmError> {
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Err(LlmError::new(message));
        }
        if let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) {
            if let Some(delta) = choice.get("delta") {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str)
                && !self.finished
            {
                self.finish(finish_reason(reason), out)?;
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            out.push_back(StreamEvent::Usage(usage_of(usage)));
        }
        Ok(())
    }

    fn delta(&mut self, delta: &Value, out: &mut VecDeque<StreamEvent>) {
        let field = |name: &str| delta.get(name).and_then(Value::as_str);
        if let Some(reasoning) = field("reasoning_content").or_else(|| field("reasoning"))
            && !reasoning.is_empty()
        {
            out.push_back(StreamEvent::Reasoning(reasoning.to_string()));
        }
        if let Some(text) = field("content")
            && !text.is_empty()
        {
            out.push_back(StreamEvent::Text(text.to_string()));
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.tool_call_delta(call);
        }
    }

    fn tool_call_delta(&mut self, delta: &Value) {
        let field = |pointer: &str| delta.pointer(pointer).and_then(Value::as_str);
        let id = field("/id").filter(|id| !id.is_empty());
        // A server that leaves out `index` sends one call at a time: a new id opens the next.
        let index = match delta.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            None => match (id, self.calls.last_key_value()) {
                (None, Some((&last, _))) => last,
                (_, last) => last.map_or(0, |(&last, _)| last + 1),
            },
        };
        let call = self.calls.entry(index).or_default();
        // The name and id come once, in the call's first delta; some servers repeat them.
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        if let Some(name) = field("/function/name")
            && call.name.is_empty()
        {
            call.name = name.to_string();
        }
        if let Some(arguments) = field("/function/arguments") {
            call.arguments.push_str(arguments);
        }
    }

    /// Hands on the assembled tool calls, in index order, then the finish reason.
    fn finish(
        &mut self,
        reason: FinishReason,
        out: &mut VecDeque<StreamEvent>,
    ) -> Result<(), LlmError> {
        let called = !self.calls.is_empty();
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(LlmError::new(format!(
                    "the model sent tool call {index} without a name"
                )));
            }
            let id = match call.id.is_empty() {
                // Some local servers send no ids; the results still need one to refer to.
                true => super::new_call_id(),
                false => call.id,
            };
            out.push_back(StreamEvent::ToolCall {
                id,
                name: call.name,
                arguments: sse::arguments(call.arguments),
            });
        }
        self.finished = true;
        // Some servers (older Ollama, vLLM) report "stop" after calling tools.
        let reason = match reason {
            FinishReason::Stop if called => FinishReason::ToolCalls,
            reason => reason,
        };
        out.push_back(StreamEvent::Finish(reason));
        Ok(())
    }
}

/// Usage, with the cached part of the prompt (`prompt_tokens_details.cached_tokens`) split
/// out of `input`, and the reasoning part of the output when the server says.
fn usage_of(usage: &Value) -> Usage {
    let reported = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64);
    let count = |pointer: &str| reported(pointer).unwrap_or(0);
    let cached = count("/prompt_tokens_details/cached_tokens");
    Usage {
        input: count("/prompt_tokens").saturating_sub(cached),
        output: count("/completion_tokens"),
        cache_read: cached,
        cache_write: 0,
        thoughts: reported("/completion_tokens_details/reasoning_tokens"),
    }
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        other => FinishReason::Other(other.to_string()),
    }
}

/// How a user supplies the credential, for `authMethods` and auth errors.
pub fn credential_hint() -> String {
    format!(
        "Set {OPENAI_API_KEY_ENV}, or point OPENAI_BASE_URL at a server that needs no key (Ollama, llama.cpp…); an embedding host can pass providers.openai.apiKey / baseUrl in the config"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::{ToolResult, ToolSpec};
    use crate::llm::testing::{self, IDLE_TIMEOUT};

    fn tool_call(id: &str, name: &str, arguments: &str) -> StreamEvent {
        StreamEvent::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    fn chunk(delta: Value, finish: Option<&str>) -> String {
        json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] }).to_string()
    }

    #[tokio::test]
    async fn assembles_chunked_tool_calls_from_the_stream() {
        let mock = testing::mock(json!([{ "events": [
            { "text": "Reading both." },
            { "toolCall": { "id": "call_1", "name": "read", "arguments": "{\"path\":\"a.rs\"}", "chunks": 3 } },
            { "toolCall": { "id": "call_2", "name": "grep", "arguments": "{\"pattern\":\"fn main\"}", "chunks": 4 } },
            { "usage": { "input": 12, "output": 7 } },
        ]}]));
        let provider = OpenAi::new(testing::endpoint(&mock, 0), IDLE_TIMEOUT);
        let (events, error) =
            testing::run(&provider, testing::request(testing::prompt("hi"))).await;
        assert_eq!(error, None);
        assert_eq!(
            events,
            [
                StreamEvent::Text("Reading both.".into()),
                tool_call("call_1", "read", r#"{"path":"a.rs"}"#),
                tool_call("call_2", "grep", r#"{"pattern":"fn main"}"#),
                StreamEvent::Finish(FinishReason::ToolCalls),
                StreamEvent::Usage(Usage {
                    input: 12,
                    output: 7,
                    ..Usage::default()
                }),
            ]
        );
    }

    #[test]
    fn interleaved_tool_call_deltas_are_assembled_per_index() {
        let head = |index: u64, id: &str, name: &str| {
            json!({ "tool_calls": [{ "index": index, "id": id, "type": "function",
                                     "function": { "name": name, "arguments": "" } }] })
        };
        let piece = |index: u64, arguments: &str| json!({ "tool_calls": [{ "index": index, "function": { "arguments": arguments } }] });
        let events = testing::feed::<Decoder>([
            chunk(head(1, "call_b", "grep"), None),
            chunk(head(0, "call_a", "read"), None),
            chunk(piece(0, "{\"path\""), None),
            chunk(piece(1, "{\"pattern\":"), None),
            // Two calls' deltas in one chunk, and a call without arguments.
            chunk(
                json!({ "tool_calls": [
                { "index": 1, "function": { "arguments": "\"x\"}" } },
                { "index": 0, "function": { "arguments": ":\"a\"}" } },
            ] }),
                None,
            ),
            chunk(head(2, "call_c", "todo"), Some("tool_calls")),
            "[DONE]".into(),
        ])
        .unwrap();
        assert_eq!(
            events,
            [
                tool_call("call_a", "read", r#"{"path":"a"}"#),
                tool_call("call_b", "grep", r#"{"pattern":"x"}"#),
                tool_call("call_c", "todo", "{}"),
                StreamEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }

    #[test]
    fn servers_without_indexes_ids_or_the_right_finish_reason_still_work() {
        let call = |id: Option<&str>, name: Option<&str>, arguments: &str| {
            let mut call = json!({ "function": { "arguments": arguments } });
            if let Some(id) = id {
                call["id"] = json!(id);
            }
            if let Some(name) = name {
                call["function"]["name"] = json!(name);
            }
            json!({ "tool_calls": [call] })
        };
        let events = testing::feed::<Decoder>([
            chunk(call(Some("c1"), Some("read"), "{\"path\":"), None),
            chunk(call(None, None, "\"a\"}"), None),
            chunk(call(Some("c2"), Some("list"), "{}"), None),
            chunk(json!({}), Some("stop")),
        ])
        .unwrap();
        assert_eq!(
            events,
            [
                tool_call("c1", "read", r#"{"path":"a"}"#),
                tool_call("c2", "list", "{}"),
                StreamEvent::Finish(FinishReason::ToolCalls),
            ]
        );
        let events =
            testing::feed::<Decoder>([chunk(call(None, Some("read"), "{}"), Some("tool_calls"))])
                .unwrap();
        assert!(
            matches!(&events[0], StreamEvent::ToolCall { id, .. } if id.starts_with("call_")),
            "a call without an id gets one: {events:?}"
        );
    }

    #[test]
    fn text_chunks_of_every_shape_are_read_as_before() {
        let events = testing::feed::<Decoder>([
            // Escapes, and fields this code does not know.
            json!({ "id": "c", "system_fingerprint": "fp", "choices": [{ "index": 0,
                    "delta": { "role": "assistant", "content": "a\"b\n", "refusal": null },
                    "logprobs": null, "finish_reason": null }] })
            .to_string(),
            chunk(json!({ "reasoning_content": "think" }), None),
            chunk(json!({ "reasoning": "more", "content": "" }), None),
            // Two choices: the first is the answer.
            json!({ "choices": [{ "index": 0, "delta": { "content": "first" } },
                                { "index": 1, "delta": { "content": "second" } }] })
            .to_string(),
            // No choices, no delta, a delta that is not an object: nothing.
            json!({ "id": "c" }).to_string(),
            json!({ "choices": [{ "index": 0, "delta": null }] }).to_string(),
            json!({ "choices": [{ "index": 0, "delta": 3 }] }).to_string(),
            chunk(json!({ "content": "last" }), Some("stop")),
            json!({ "choices": [], "usage": { "prompt_tokens": 3, "completion_tokens": 4 } })
                .to_string(),
            "[DONE]".into(),
        ])
        .unwrap();
        assert_eq!(
            events,
            [
                StreamEvent::Text("a\"b\n".into()),
                StreamEvent::Reasoning("think".into()),
                StreamEvent::Reasoning("more".into()),
                StreamEvent::Text("first".into()),
                StreamEvent::Text("last".into()),
                StreamEvent::Finish(FinishReason::Stop),
                StreamEvent::Usage(Usage {
                    input: 3,
                    output: 4,
                    ..Usage::default()
                }),
            ]
        );
    }

    #[tokio::test]
    async fn a_stream_cut_inside_a_tool_call_is_an_error_without_the_call() {
        let mock = testing::mock(json!([
            { "events": [
                { "text": "Let me look." },
                { "toolCall": { "id": "call_1", "name": "read", "arguments": "{\"path\":\"a.rs\"}", "chunks": 3 } },
            ], "truncate": true },
        ]));
        let provider = OpenAi::new(testing::endpoint(&mock, 3), IDLE_TIMEOUT);
        let (events, error) =
            testing::run(&provider, testing::request(testing::prompt("hi"))).await;
        assert_eq!(events, [StreamEvent::Text("Let me look.".into())]);
        let error = error.expect("an error");
        assert!(error.message.contains("stream broke"), "{error}");
        // The end of a stream without `finish_reason` is no better.
        let cut = testing::feed::<Decoder>([chunk(
            json!({ "tool_calls": [{ "index": 0, "id": "c", "function": { "name": "read", "arguments": "{\"pa" } }] }),
            None,
        )]);
        assert!(cut.unwrap_err().error.message.contains("ended before"));
    }

    #[test]
    fn usage_splits_out_cached_prompt_tokens() {
        let usage = json!({ "choices": [], "usage": {
            "prompt_tokens": 100, "completion_tokens": 20,
            "prompt_tokens_details": { "cached_tokens": 64 },
            "completion_tokens_details": { "reasoning_tokens": 12 },
        } });
        let events = testing::feed::<Decoder>([
            chunk(json!({ "content": "ok" }), Some("stop")),
            usage.to_string(),
            "[DONE]".into(),
        ])
        .unwrap();
        assert_eq!(
            events[2],
            StreamEvent::Usage(Usage {
                input: 36,
                output: 20,
                cache_read: 64,
                cache_write: 0,
                thoughts: Some(12),
            })
        );
    }

    #[tokio::test]
    async fn the_request_carries_tools_tool_calls_results_and_reasoning_effort() {
        let mock = testing::mock(json!([{ "events": [{ "text": "Done." }] }]));
        let provider = OpenAi::new(testing::endpoint(&mock, 0), IDLE_TIMEOUT);
        let mut request = testing::request(vec![
            Message::user_text("Read a.rs"),
            Message::Assistant {
                parts: vec![
                    AssistantPart::Thinking {
                        text: "hm".into(),
                        signature: None,
                    },
                    AssistantPart::ToolCall {
                        id: "call_1".into(),
                        name: "read".into(),
                        arguments: r#"{"path":"a.rs"}"#.into(),
                    },
                ],
            },
            Message::ToolResults {
                results: vec![ToolResult::text(
                    "call_1".into(),
                    "read".into(),
                    "fn main() {}".into(),
                    false,
                )],
            },
        ]);
        request.tools = vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({ "type": "object", "properties": { "path": { "type": "string" } } })
                .into(),
        }];
        request.thought_level = Some(ThoughtLevel::High);
        let (_, error) = testing::run(&provider, request).await;
        assert_eq!(error, None);
        let sent = &mock.requests()[0];
        assert_eq!(sent.path, "/v1/chat/completions");
        assert_eq!(sent.headers["authorization"], "Bearer test-key");
        // The body's pieces go out as one body of known length, not chunked.
        assert_eq!(sent.headers["content-length"], sent.raw.len().to_string());
        assert!(!sent.headers.contains_key("transfer-encoding"));
        // The head's members in the order they go out (the prompt cache matches on bytes).
        let head = concat!(
            r#"{"model":"test-model","stream":true,"stream_options":{"include_usage":true},"#,
            r#""reasoning_effort":"high","tools":[{"type":"function","function":{"name":"read","#,
            r#""description":"Read a file","parameters":{"type":"object","properties":{"path":"#,
            r#"{"type":"string"}}}}}],"messages":[{"role":"system","content":"Be brief."},"#,
        );
        assert!(sent.raw.starts_with(head), "{}", sent.raw);
        let body = &sent.body;
        assert_eq!(body["reasoning_effort"], "high");
        assert_eq!(body["stream"], true);
        assert_eq!(
            body["tools"],
            json!([{ "type": "function", "function": {
                "name": "read", "description": "Read a file",
                "parameters": { "type": "object", "properties": { "path": { "type": "string" } } },
            } }])
        );
        assert_eq!(
            body["messages"],
            json!([
                { "role": "system", "content": "Be brief." },
                { "role": "user", "content": "Read a.rs" },
                { "role": "assistant", "content": null, "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": { "name": "read", "arguments": "{\"path\":\"a.rs\"}" },
                }] },
                { "role": "tool", "tool_call_id": "call_1", "content": "fn main() {}" },
            ])
        );
    }

    #[test]
    fn no_reasoning_effort_when_thinking_is_off() {
        let mut request = testing::request(testing::prompt("hi"));
        request.thought_level = Some(ThoughtLevel::Off);
        let body: Value = serde_json::from_str(&OpenAi::body(&request).text()).unwrap();
        assert!(body.get("reasoning_effort").is_none());
        assert!(body.get("tools").is_none());
    }
}
