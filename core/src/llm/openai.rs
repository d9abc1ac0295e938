//! OpenAI-compatible chat completions, streamed (OpenAI, Ollama, vLLM, llama.cpp server,
//! LM Studio, OpenRouter, Groq…).

use std::collections::VecDeque;
use std::sync::OnceLock;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt};
use serde_json::{Value, json};

use super::{
    AssistantPart, ChatRequest, EventStream, FinishReason, LlmError, Message, Provider,
    StreamEvent, ThoughtLevel, Usage,
};
use crate::config::{Endpoint, OPENAI_API_KEY_ENV};

pub struct OpenAi {
    /// Built on first use: loading the platform's certificates costs milliseconds that an
    /// engine answering `initialize` and `session/new` should not pay.
    http: OnceLock<Result<reqwest::Client, String>>,
    endpoint: Endpoint,
    idle_timeout: Duration,
}

impl OpenAi {
    pub fn new(endpoint: Endpoint, idle_timeout: Duration) -> Self {
        OpenAi {
            http: OnceLock::new(),
            endpoint,
            idle_timeout,
        }
    }

    fn http(&self) -> Result<&reqwest::Client, LlmError> {
        let built = self.http.get_or_init(|| {
            reqwest::Client::builder()
                .tls_backend_preconfigured(super::tls::client_config()?)
                .connect_timeout(Duration::from_secs(30))
                .build()
                .map_err(|e| e.to_string())
        });
        built
            .as_ref()
            .map_err(|e| LlmError::new(format!("cannot set up the HTTP client: {e}")))
    }

    fn body(request: &ChatRequest) -> Value {
        let mut messages = vec![json!({ "role": "system", "content": request.system })];
        messages.extend(request.messages.iter().flat_map(wire_messages));
        let mut body = json!({
            "model": request.model,
            "messages": messages,
            "stream": true,
            "stream_options": { "include_usage": true },
        });
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request.tools.iter().map(|t| json!({
                "type": "function",
                "function": { "name": t.name, "description": t.description, "parameters": t.parameters },
            })).collect();
            body["tools"] = Value::Array(tools);
        }
        if let Some(effort) = request.thought_level.and_then(reasoning_effort) {
            body["reasoning_effort"] = json!(effort);
        }
        body
    }
}

/// One conversation message as chat-completions messages (tool results are one message each).
fn wire_messages(message: &Message) -> Vec<Value> {
    match message {
        Message::User { text } => vec![json!({ "role": "user", "content": text })],
        Message::Assistant { parts } => {
            let text: String = parts
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::Text { text } => Some(text.as_str()),
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
                wire["tool_calls"] = Value::Array(calls);
            }
            vec![wire]
        }
        Message::ToolResults { results } => results
            .iter()
            .map(|r| json!({ "role": "tool", "tool_call_id": r.call_id, "content": r.content }))
            .collect(),
    }
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
        self.endpoint.api_key.is_some() || !self.endpoint.default_base_url
    }

    fn stream(&self, request: ChatRequest) -> BoxFuture<'static, Result<EventStream, LlmError>> {
        let http = match self.http() {
            Ok(http) => http,
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        let url = format!(
            "{}/chat/completions",
            self.endpoint.base_url.trim_end_matches('/')
        );
        let mut call = http.post(url).json(&Self::body(&request));
        if let Some(key) = &self.endpoint.api_key {
            call = call.bearer_auth(key.expose());
        }
        let idle_timeout = self.idle_timeout;
        Box::pin(async move {
            let response = tokio::time::timeout(idle_timeout, call.send())
                .await
                .map_err(|_| LlmError::new("the model did not answer in time"))?
                .map_err(|e| {
                    LlmError::new(format!("cannot reach the model: {}", root_cause(&e)))
                })?;
            let status = response.status();
            if !status.is_success() {
                let body = response.text().await.unwrap_or_default();
                return Err(LlmError {
                    message: error_message(&body),
                    status: Some(status.as_u16()),
                });
            }
            Ok(events(
                response.bytes_stream().eventsource().boxed(),
                idle_timeout,
            ))
        })
    }
}

/// The innermost cause: reqwest's outer message ("error sending request") says little.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// The provider's own message from an error body (`{"error":{"message":…}}`), else the body.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
    });
    match message {
        Some(m) => m.to_string(),
        None if body.trim().is_empty() => "no error message".to_string(),
        None => body.chars().take(500).collect(),
    }
}

type SseStream = BoxStream<
    'static,
    Result<eventsource_stream::Event, eventsource_stream::EventStreamError<reqwest::Error>>,
>;

struct Decoder {
    sse: SseStream,
    pending: VecDeque<StreamEvent>,
    finished: bool,
    done: bool,
    idle_timeout: Duration,
}

/// Turns the SSE byte stream into model events. A stream that ends before the model said
/// why it stopped is an error: the answer is incomplete.
fn events(sse: SseStream, idle_timeout: Duration) -> EventStream {
    let decoder = Decoder {
        sse,
        pending: VecDeque::new(),
        finished: false,
        done: false,
        idle_timeout,
    };
    stream::unfold(decoder, |mut d| async move {
        loop {
            if let Some(event) = d.pending.pop_front() {
                return Some((Ok(event), d));
            }
            if d.done {
                return None;
            }
            match tokio::time::timeout(d.idle_timeout, d.sse.next()).await {
                Err(_) => {
                    d.done = true;
                    let secs = d.idle_timeout.as_secs();
                    return Some((
                        Err(LlmError::new(format!(
                            "the model stream stalled for {secs} s"
                        ))),
                        d,
                    ));
                }
                Ok(None) => {
                    d.done = true;
                    if !d.finished {
                        return Some((
                            Err(LlmError::new(
                                "the model stream ended before the response was complete",
                            )),
                            d,
                        ));
                    }
                }
                Ok(Some(Err(e))) => {
                    d.done = true;
                    return Some((
                        Err(LlmError::new(format!("the model stream broke: {e}"))),
                        d,
                    ));
                }
                Ok(Some(Ok(event))) if event.data.trim() == "[DONE]" => {
                    d.done = true;
                    if !d.finished {
                        d.pending.push_back(StreamEvent::Finish(FinishReason::Stop));
                        d.finished = true;
                    }
                }
                Ok(Some(Ok(event))) => {
                    if let Err(e) = d.decode(&event.data) {
                        d.done = true;
                        return Some((Err(e), d));
                    }
                }
            }
        }
    })
    .boxed()
}

impl Decoder {
    fn decode(&mut self, data: &str) -> Result<(), LlmError> {
        if data.trim().is_empty() {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::new(format!("the model sent a malformed chunk: {e}")))?;
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            return Err(LlmError::new(message));
        }
        if let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) {
            let delta = choice.get("delta");
            let field = |name: &str| delta.and_then(|d| d.get(name)).and_then(Value::as_str);
            if let Some(reasoning) = field("reasoning_content").or_else(|| field("reasoning"))
                && !reasoning.is_empty()
            {
                self.pending
                    .push_back(StreamEvent::Reasoning(reasoning.to_string()));
            }
            if let Some(text) = field("content")
                && !text.is_empty()
            {
                self.pending.push_back(StreamEvent::Text(text.to_string()));
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finished = true;
                self.pending
                    .push_back(StreamEvent::Finish(finish_reason(reason)));
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
            self.pending.push_back(StreamEvent::Usage(Usage {
                input: count("prompt_tokens"),
                output: count("completion_tokens"),
                ..Usage::default()
            }));
        }
        Ok(())
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
