//! Model providers: a request in, a stream of events out.

pub mod openai;
mod tls;

use futures::future::BoxFuture;
use futures::stream::BoxStream;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
}

/// Why the model stopped, in the provider's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Length,
    ContentFilter,
    ToolCalls,
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    Text(String),
    Reasoning(String),
    Usage { input: u64, output: u64 },
    Finish(FinishReason),
}

/// A provider failure, with the provider's own message when it sent one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmError {
    pub message: String,
    pub status: Option<u16>,
}

impl LlmError {
    pub fn new(message: impl Into<String>) -> Self {
        LlmError {
            message: message.into(),
            status: None,
        }
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

pub type EventStream = BoxStream<'static, Result<StreamEvent, LlmError>>;

pub trait Provider: Send + Sync {
    /// Whether a credential is configured; without one every prompt is refused with
    /// "authentication required" before anything is sent.
    fn has_credential(&self) -> bool;

    /// Starts a streamed completion. Dropping the stream drops the HTTP connection.
    fn stream(&self, request: ChatRequest) -> BoxFuture<'static, Result<EventStream, LlmError>>;
}
