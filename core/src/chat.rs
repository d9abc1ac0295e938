//! The conversation as the model sees it: messages, tool specs and results, thought level.
//!
//! A leaf: it imports nothing else of the crate, so the turn loop, the providers and the
//! tools share these types without knowing one another. They are serde because each model
//! message is kept in the session's log (its `model` column) and the context is rebuilt from
//! it exactly — Anthropic requires thinking blocks and their signatures back verbatim.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        text: String,
    },
    Assistant {
        parts: Vec<AssistantPart>,
    },
    /// The results of the tool calls of the preceding assistant message, in call order.
    ToolResults {
        results: Vec<ToolResult>,
    },
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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
}

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
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
