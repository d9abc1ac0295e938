//! The script: what the mock answers, one response per model request, in order (a response
//! with a `when` waits for a request that matches it).
//!
//! Every struct denies unknown fields so a typo in a test's script is a loud parse error
//! instead of a silently ignored key.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A whole script: responses consumed first to last by incoming model requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default)]
    pub responses: Vec<Response>,
}

impl Script {
    /// Reads a JSON script; the error names the file so a failing test points at it.
    pub fn from_file(path: impl AsRef<Path>) -> io::Result<Script> {
        let path = path.as_ref();
        let located = |kind, e: &dyn std::fmt::Display| {
            io::Error::new(kind, format!("{}: {e}", path.display()))
        };
        let text = std::fs::read_to_string(path).map_err(|e| located(e.kind(), &e))?;
        serde_json::from_str(&text).map_err(|e| located(io::ErrorKind::InvalidData, &e))
    }
}

/// One scripted answer to one model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Response {
    /// HTTP status; anything outside 2xx is sent as an error body instead of a completion.
    #[serde(default = "ok")]
    pub status: u16,
    /// Extra response headers, e.g. `retry-after` on a 429.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Message of the error body for a non-2xx status (default: one naming the status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wait this long before sending the response headers.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    /// Defaults to `tool_calls` when the events hold a tool call, else `stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<Finish>,
    /// Cut the connection after the events, before the stream's proper end.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncate: bool,
    /// Serve this response only to a request that matches, so concurrent requests (a parent
    /// turn and its subagents) each get their own; without it, the next request takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<When>,
}

/// Which requests a response is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct When {
    /// The request's body, as sent, holds this text.
    pub contains: String,
}

impl When {
    pub(crate) fn matches(&self, raw_body: &str) -> bool {
        raw_body.contains(&self.contains)
    }
}

impl Default for Response {
    fn default() -> Self {
        Response {
            status: ok(),
            headers: BTreeMap::new(),
            error: None,
            delay_ms: 0,
            events: Vec::new(),
            finish: None,
            truncate: false,
            when: None,
        }
    }
}

impl Response {
    /// A 200 streaming `text` in a few deltas, then `stop`.
    pub fn text(text: &str) -> Response {
        Response::events(
            split(text, 3)
                .into_iter()
                .map(|piece| Event::Text(piece.to_owned()))
                .collect(),
        )
    }

    /// A 200 streaming these events.
    pub fn events(events: Vec<Event>) -> Response {
        Response {
            events,
            ..Response::default()
        }
    }

    /// This response, for requests whose body holds `text` only.
    pub fn when_contains(self, text: &str) -> Response {
        Response {
            when: Some(When {
                contains: text.to_owned(),
            }),
            ..self
        }
    }

    /// An error response with this status and message.
    pub fn error(status: u16, message: &str) -> Response {
        Response {
            status,
            error: Some(message.to_owned()),
            ..Response::default()
        }
    }

    pub(crate) fn finish_reason(&self) -> Finish {
        self.finish.unwrap_or_else(|| {
            let calls_tool = self.events.iter().any(|e| matches!(e, Event::ToolCall(_)));
            if calls_tool {
                Finish::ToolCalls
            } else {
                Finish::Stop
            }
        })
    }

    /// Usage is metadata, not content: both APIs report it at fixed points of the stream,
    /// wherever the script lists it, so the last one listed wins.
    pub(crate) fn usage(&self) -> Option<Usage> {
        self.events.iter().rev().find_map(|e| match e {
            Event::Usage(usage) => Some(*usage),
            _ => None,
        })
    }
}

/// One step of a streamed response. In JSON an object with exactly one key, e.g.
/// `{"text": "Hel"}`; `signature` may accompany `reasoning`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawEvent", into = "RawEvent")]
pub enum Event {
    Text(String),
    Reasoning {
        text: String,
        signature: Option<String>,
    },
    /// Anthropic only; the OpenAI dialect has nothing to carry it and skips it.
    RedactedThinking(String),
    ToolCall(ToolCall),
    /// Anthropic only: a web search the API ran itself. The OpenAI dialect skips it.
    ServerSearch(ServerSearch),
    /// Text with citations (Anthropic); the OpenAI dialect sends the text alone.
    CitedText(CitedText),
    Usage(Usage),
    /// Pause mid-stream after flushing what was already produced.
    StallMs(u64),
    Repeat(Repeat),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: String,
    /// OpenAI `tool_calls[].index`; defaults to the call's position among the tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
    /// How many deltas the arguments are streamed in.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub chunks: usize,
}

impl ToolCall {
    pub(crate) fn argument_pieces(&self) -> Vec<&str> {
        split(&self.arguments, self.chunks)
    }
}

/// Anthropic's server-side search: a `server_tool_use` block calling `web_search` with
/// `query`, then a `web_search_tool_result` block holding `results` as given (each a
/// `web_search_result` object, `encrypted_content` and all), or the error `errorCode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerSearch {
    pub id: String,
    pub query: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
}

/// A text block carrying `citations` (each as given, e.g. a `web_search_result_location`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CitedText {
    pub text: String,
    pub citations: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens neither read from nor written to the cache.
    pub input: u64,
    pub output: u64,
    /// Prompt tokens served from the provider's cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Prompt tokens written to the cache (Anthropic only).
    #[serde(default)]
    pub cache_write: u64,
    /// The part of `output` spent reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thoughts: Option<u64>,
}

/// `count` text deltas of `text`, produced lazily so benchmarks can ask for millions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    pub text: String,
    pub count: u64,
}

/// Why generation stopped, by its OpenAI name; the Anthropic names are accepted as aliases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    #[serde(alias = "end_turn")]
    Stop,
    #[serde(alias = "max_tokens")]
    Length,
    #[serde(alias = "tool_use")]
    ToolCalls,
    #[serde(alias = "refusal")]
    ContentFilter,
    /// Anthropic's `pause_turn` (a long turn of server tools, to be resumed); OpenAI `stop`.
    #[serde(rename = "pause_turn")]
    Paused,
}

impl Finish {
    pub(crate) fn openai(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::Length => "length",
            Finish::ToolCalls => "tool_calls",
            Finish::ContentFilter => "content_filter",
            Finish::Paused => "stop",
        }
    }

    pub(crate) fn anthropic(self) -> &'static str {
        match self {
            Finish::Stop => "end_turn",
            Finish::Length => "max_tokens",
            Finish::ToolCalls => "tool_use",
            Finish::ContentFilter => "refusal",
            Finish::Paused => "pause_turn",
        }
    }
}

/// The JSON shape of an [`Event`]: every key optional, so serde names a misspelt key in its
/// error, and the one-key rule is checked afterwards with a message of our own.
#[derive(Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawEvent {
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    redacted_thinking: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call: Option<ToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_search: Option<ServerSearch>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cited_text: Option<CitedText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stall_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeat: Option<Repeat>,
}

impl TryFrom<RawEvent> for Event {
    type Error = String;

    fn try_from(raw: RawEvent) -> Result<Event, String> {
        if raw.signature.is_some() && raw.reasoning.is_none() {
            return Err("`signature` is only allowed next to `reasoning`".into());
        }
        let mut found = Vec::new();
        found.extend(raw.text.map(Event::Text));
        found.extend(raw.reasoning.map(|text| Event::Reasoning {
            text,
            signature: raw.signature,
        }));
        found.extend(raw.redacted_thinking.map(Event::RedactedThinking));
        found.extend(raw.tool_call.map(Event::ToolCall));
        found.extend(raw.server_search.map(Event::ServerSearch));
        found.extend(raw.cited_text.map(Event::CitedText));
        found.extend(raw.usage.map(Event::Usage));
        found.extend(raw.stall_ms.map(Event::StallMs));
        found.extend(raw.repeat.map(Event::Repeat));
        match (found.pop(), found.is_empty()) {
            (Some(event), true) => Ok(event),
            (None, _) => Err(
                "an event needs one of `text`, `reasoning`, `redactedThinking`, \
                              `toolCall`, `serverSearch`, `citedText`, `usage`, `stallMs`, \
                              `repeat`"
                    .into(),
            ),
            (Some(_), false) => Err("an event has exactly one key (plus `signature` with \
                                     `reasoning`); split it into several events"
                .into()),
        }
    }
}

impl From<Event> for RawEvent {
    fn from(event: Event) -> RawEvent {
        let mut raw = RawEvent::default();
        match event {
            Event::Text(text) => raw.text = Some(text),
            Event::Reasoning { text, signature } => {
                raw.reasoning = Some(text);
                raw.signature = signature;
            }
            Event::RedactedThinking(data) => raw.redacted_thinking = Some(data),
            Event::ToolCall(call) => raw.tool_call = Some(call),
            Event::ServerSearch(search) => raw.server_search = Some(search),
            Event::CitedText(cited) => raw.cited_text = Some(cited),
            Event::Usage(usage) => raw.usage = Some(usage),
            Event::StallMs(ms) => raw.stall_ms = Some(ms),
            Event::Repeat(repeat) => raw.repeat = Some(repeat),
        }
        raw
    }
}

/// Cuts `text` into at most `pieces` non-empty parts of about equal length, on char
/// boundaries.
fn split(text: &str, pieces: usize) -> Vec<&str> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(at, _)| at)
        .chain([text.len()])
        .collect();
    let chars = bounds.len() - 1;
    if chars == 0 {
        return Vec::new();
    }
    let pieces = pieces.clamp(1, chars);
    (0..pieces)
        .map(|k| &text[bounds[k * chars / pieces]..bounds[(k + 1) * chars / pieces]])
        .collect()
}

fn ok() -> u16 {
    200
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !b
}
