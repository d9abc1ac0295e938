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
    /// This result with a note where its images were (`without_images`).
    fn without_images(&self) -> ToolResult {
        let mut result = ToolResult {
            images: Vec::new(),
            ..self.clone()
        };
        if !self.images.is_empty() {
            let note = format!(
                "[{} image(s) the tool returned are not shown: the current model does not take \
                 images.]",
                self.images.len()
            );
            result.content = match result.content.is_empty() {
                true => note,
                false => format!("{}\n{note}", result.content),
            };
        }
        result
    }

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

/// What a model without vision reads where a prompt had an image.
pub const IMAGE_NOT_SHOWN: &str = "[An image was here; the current model does not take images.]";

/// `messages` as a model without vision takes them: each image a note saying one was there
/// (a conversation that began with a model that sees, then switched). The same messages,
/// shared, when none has an image.
pub fn without_images(messages: Arc<Vec<Message>>) -> Arc<Vec<Message>> {
    let has_images = |message: &Message| match message {
        Message::User { content } => content.iter().any(|p| matches!(p, UserPart::Image(_))),
        Message::ToolResults { results } => results.iter().any(|r| !r.images.is_empty()),
        Message::Assistant { .. } => false,
    };
    if !messages.iter().any(has_images) {
        return messages;
    }
    let seen = messages.iter().map(|message| match message {
        Message::User { content } => Message::User {
            content: content
                .iter()
                .map(|part| match part {
                    UserPart::Image(_) => UserPart::Text {
                        text: IMAGE_NOT_SHOWN.into(),
                    },
                    text => text.clone(),
                })
                .collect(),
        },
        Message::ToolResults { results } => Message::ToolResults {
            results: results.iter().map(ToolResult::without_images).collect(),
        },
        assistant => assistant.clone(),
    });
    Arc::new(seen.collect())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn image() -> Image {
        Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        }
    }

    #[test]
    fn a_model_without_vision_reads_notes_where_images_were() {
        let plain = Arc::new(vec![Message::user_text("hi")]);
        assert!(
            Arc::ptr_eq(&without_images(plain.clone()), &plain),
            "shared as is"
        );
        let result = ToolResult {
            images: vec![image(), image()],
            ..ToolResult::text("c1".into(), "read".into(), "a.png".into(), false)
        };
        let messages = Arc::new(vec![
            Message::User {
                content: vec![
                    UserPart::Text {
                        text: "look".into(),
                    },
                    UserPart::Image(image()),
                ],
            },
            Message::ToolResults {
                results: vec![result],
            },
        ]);
        let seen = without_images(messages);
        assert_eq!(
            seen[0],
            Message::User {
                content: vec![
                    UserPart::Text {
                        text: "look".into()
                    },
                    UserPart::Text {
                        text: IMAGE_NOT_SHOWN.into()
                    },
                ],
            }
        );
        let Message::ToolResults { results } = &seen[1] else {
            panic!("{:?}", seen[1])
        };
        assert!(results[0].images.is_empty());
        assert_eq!(
            results[0].content,
            "a.png\n[2 image(s) the tool returned are not shown: the current model does not \
             take images.]"
        );
    }
}
