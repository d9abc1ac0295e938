//! The conversation as the model sees it: messages, tool specs and results, thought level.
//!
//! A leaf: it imports nothing else of the crate, so the turn loop, the providers and the
//! tools share these types without knowing one another. They are serde because each model
//! message is kept in the session's log (its `model` column) and the context is rebuilt from
//! it exactly — Anthropic requires thinking blocks and their signatures back verbatim.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// A prompt (or text the engine adds as the user's turn: changed project instructions,
    /// a compaction summary), in the order its blocks came.
    User {
        content: Vec<UserPart>,
    },
    Assistant {
        parts: Vec<AssistantPart>,
    },
    /// The results of the tool calls of the preceding assistant message, in call order.
    ToolResults {
        results: Vec<ToolResult>,
    },
}

impl Message {
    /// A user message of one text block.
    pub fn user_text(text: impl Into<String>) -> Message {
        Message::User {
            content: vec![UserPart::Text { text: text.into() }],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserPart {
    Text { text: String },
    Image(Image),
}

/// An image as providers take it: base64 data of a format they all read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub mime_type: String,
    /// Base64 (standard alphabet, padded).
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantPart {
    Text {
        text: String,
    },
    /// Reasoning. `signature` is Anthropic's; it must be sent back unchanged.
    Thinking {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    /// `arguments` is the JSON text as the model produced it.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    /// A content block of a tool the provider ran itself (Anthropic's web search: its
    /// `server_tool_use` and its `web_search_tool_result`, encrypted content and all), as the
    /// provider sent it: it goes back unchanged, and other providers leave it out.
    ServerBlock {
        block: Value,
    },
    /// Text the provider backed with citations of its own search's results (Anthropic's
    /// `citations`, each with its `encrypted_index`), which go back with the text unchanged.
    CitedText {
        text: String,
        citations: Vec<Value>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
    /// Images the tool returned (the `read` tool on an image file), for vision models.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

impl ToolResult {
    /// A result of text alone.
    pub fn text(call_id: String, name: String, content: String, is_error: bool) -> ToolResult {
        ToolResult {
            call_id,
            name,
            content,
            is_error,
            images: Vec::new(),
        }
    }
}

/// A tool as the model sees it. Every request lists every tool, so the schema is shared
/// rather than copied into each.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Arc<Value>,
}

/// How hard the model should think: OpenAI `reasoning_effort`, Anthropic thinking budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThoughtLevel {
    Off,
    Low,
    Medium,
    High,
}

/// What the user sent, as the turn needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub blocks: Vec<PromptBlock>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PromptBlock {
    /// The block as the client sent it, logged as is (the model reads it back from the log).
    pub content: Value,
    /// The text of a plain text block (titles come from it).
    pub text: Option<String>,
}
