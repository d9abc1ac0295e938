//! Model providers: a request in, a stream of events out. The conversation's types are the
//! leaf vocabulary in `chat.rs`.

pub mod anthropic;
mod anthropic_search;
mod api_key;
mod body;
pub mod category;
mod error;
mod http;
pub mod openai;
mod providers;
mod rate_reset;
mod retry;
pub(crate) mod sse;
mod sse_lines;
#[cfg(test)]
mod testing;
pub mod wire;

pub use providers::Providers;

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::stream::BoxStream;

use crate::chat::{Message, ThoughtLevel, ToolSpec};
use crate::config::AnthropicSearch;

/// One model request. The system prompt and the messages are shared with the session that
/// keeps them (its context in memory), so building a request copies neither.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub model: String,
    pub system: Arc<str>,
    /// How many of the context's messages come before `messages`: their values are no
    /// longer in memory, only their encoding in `wire` (and the session's log).
    pub earlier: usize,
    pub messages: Arc<Vec<Message>>,
    pub tools: Vec<ToolSpec>,
    /// `None` when the model has no such setting.
    pub thought_level: Option<ThoughtLevel>,
    /// Anthropic's server-side web search, offered beside `tools` (a Claude session with no
    /// search backend of its own); other providers ignore it.
    pub hosted_search: Option<AnthropicSearch>,
    /// The encoded messages of the session's earlier requests (a fresh one for a request
    /// that is not the session's next step).
    pub wire: wire::SharedWire,
    /// Whether the model takes images: else `messages` carry notes in their place
    /// (`chat::without_images`), and `wire` is of that dialect.
    pub images: bool,
}

/// Why the model stopped, in the provider's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Length,
    ContentFilter,
    ToolCalls,
    /// The provider paused a long turn of the tools it runs itself (Anthropic `pause_turn`):
    /// sending the conversation back as it is lets the model go on.
    Paused,
    Other(String),
}

/// Tokens of one model call. The input counts are disjoint whatever the provider: the whole
/// prompt is `input + cache_read + cache_write`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens neither read from nor written to the provider's cache.
    pub input: u64,
    pub output: u64,
    /// Prompt tokens served from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache (Anthropic).
    pub cache_write: u64,
    /// The part of `output` spent reasoning, when the provider says (OpenAI-compatible
    /// `completion_tokens_details.reasoning_tokens`, Anthropic
    /// `output_tokens_details.thinking_tokens`).
    pub thoughts: Option<u64>,
}

impl Usage {
    /// Adds `other`'s counts to these; thoughts are known if either side knows them.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.thoughts = match (self.thoughts, other.thoughts) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    Text(String),
    /// A reasoning delta (OpenAI `reasoning_content`/`reasoning`, Anthropic `thinking_delta`).
    Reasoning(String),
    /// The signature closing the current thinking block (Anthropic).
    ThinkingSignature(String),
    RedactedThinking(String),
    /// A complete tool call, once its arguments have fully streamed.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    /// A block of a tool the provider ran itself, to keep in the message as it came.
    ServerBlock(serde_json::Value),
    /// The text block that just ended carried citations: its text (already streamed as
    /// `Text`) and the citations, to keep together.
    CitedText {
        text: String,
        citations: Vec<serde_json::Value>,
    },
    /// What the client is shown of a web search the provider ran itself.
    Search(SearchEvent),
    Usage(Usage),
    Finish(FinishReason),
}

/// A web search the provider runs itself, as the client follows it: one started (its id
/// and query), then its results or why there are none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchEvent {
    Started {
        id: String,
        query: String,
    },
    Finished {
        id: String,
        found: Result<Vec<SearchLink>, String>,
    },
}

/// One result of the provider's search: its page, and how old the provider says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchLink {
    pub title: String,
    pub url: String,
    pub age: Option<String>,
}

/// A provider failure, with the provider's own message when it sent one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmError {
    pub message: String,
    pub status: Option<u16>,
    /// The provider's own name for the error (`error.type` or `error.code` of its body, the
    /// `type` of an Anthropic `error` event): `rate_limit_error`, `insufficient_quota`, ….
    pub code: Option<String>,
    /// When the provider said its limit resets (`rate_reset.rs`).
    pub reset_at: Option<std::time::SystemTime>,
}

/// How providers word "the prompt is longer than the model's window" (OpenAI and its
/// compatibles, Anthropic, vLLM, llama.cpp, Ollama, OpenRouter), lower-cased.
const OVERFLOW_PHRASES: &[&str] = &[
    "context_length_exceeded",
    "context length",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "input is too long",
    "exceeds the available context",
    "reduce the length",
];

impl LlmError {
    pub fn new(message: impl Into<String>) -> Self {
        LlmError {
            message: message.into(),
            ..LlmError::default()
        }
    }

    /// Whether the provider refused the request for being longer than the model's context
    /// window (a compaction and a retry can save the turn).
    pub fn is_context_overflow(&self) -> bool {
        let refused = matches!(self.status, Some(400 | 413 | 422));
        let message = self.message.to_lowercase();
        refused && OVERFLOW_PHRASES.iter().any(|p| message.contains(p))
    }
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(status) => write!(f, "HTTP {status}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// An id for a tool call whose server sent none: tool results must refer to their call.
fn new_call_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

pub type EventStream = BoxStream<'static, Result<StreamEvent, LlmError>>;

pub trait Provider: Send + Sync {
    /// Whether a credential (or a server of the user's own) is configured; without one
    /// every prompt is refused with "authentication required" before anything is sent.
    fn has_credential(&self) -> bool;

    /// Which provider this is (named in a failed prompt's error).
    fn name(&self) -> crate::config::ProviderName;

    /// Starts a streamed completion, retrying (with backoff, honouring `Retry-After`) on
    /// 429, 5xx and connection errors until the stream has started. Dropping the stream
    /// drops the HTTP connection.
    fn stream(&self, request: ChatRequest) -> BoxFuture<'static, Result<EventStream, LlmError>>;
}
