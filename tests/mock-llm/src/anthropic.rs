//! Anthropic Messages rendering (`POST /v1/messages`).

use std::fmt::Write;

use hyper::StatusCode;
use serde_json::{Value, json};

use crate::dialect::{Block, Dialect};
use crate::script::{CitedText, Finish, ServerSearch, ToolCall, Usage};

const DEFAULT_SIGNATURE: &str = "mock-signature";

pub(crate) struct Anthropic {
    id: String,
    model: String,
    /// Index the next content block gets.
    next_block: u32,
    open: Open,
}

/// The content block still taking deltas. Tool-use and redacted-thinking blocks are whole
/// when they start, so they never stay open.
enum Open {
    None,
    Text,
    Thinking { signature: Option<String> },
}

impl Anthropic {
    pub(crate) fn new(number: u64, model: &str) -> Anthropic {
        Anthropic {
            id: format!("msg_mock_{number}"),
            model: model.to_owned(),
            next_block: 0,
            open: Open::None,
        }
    }

    fn start_block(&mut self, block: Value, out: &mut String) {
        self.close_block(out);
        let index = self.next_block;
        self.next_block += 1;
        let start = json!({"type": "content_block_start", "index": index, "content_block": block});
        event(out, "content_block_start", &start);
    }

    fn delta(&self, delta: Value, out: &mut String) {
        let index = self.next_block - 1;
        let data = json!({"type": "content_block_delta", "index": index, "delta": delta});
        event(out, "content_block_delta", &data);
    }

    fn stop_block(&self, out: &mut String) {
        let data = json!({"type": "content_block_stop", "index": self.next_block - 1});
        event(out, "content_block_stop", &data);
    }

    fn close_block(&mut self, out: &mut String) {
        match std::mem::replace(&mut self.open, Open::None) {
            Open::None => {}
            Open::Text => self.stop_block(out),
            Open::Thinking { signature } => {
                // Real thinking blocks always end with their signature.
                let signature = signature.as_deref().unwrap_or(DEFAULT_SIGNATURE);
                self.delta(
                    json!({"type": "signature_delta", "signature": signature}),
                    out,
                );
                self.stop_block(out);
            }
        }
    }
}

fn event(out: &mut String, name: &str, data: &Value) {
    // Writing to a String cannot fail.
    let _ = write!(out, "event: {name}\ndata: {data}\n\n");
}

/// The `server_tool_use` block of a search, whole.
fn search_call(search: &ServerSearch) -> Value {
    json!({"type": "server_tool_use", "id": search.id, "name": "web_search", "input": {"query": search.query}})
}

/// The `web_search_tool_result` block of a search: its results, or its error.
fn search_result(search: &ServerSearch) -> Value {
    let content = match &search.error_code {
        Some(code) => json!({"type": "web_search_tool_result_error", "error_code": code}),
        None => json!(search.results),
    };
    json!({"type": "web_search_tool_result", "tool_use_id": search.id, "content": content})
}

fn cited_block(cited: &CitedText) -> Value {
    json!({"type": "text", "text": cited.text, "citations": cited.citations})
}

fn tool_input(call: &ToolCall) -> Value {
    if call.arguments.is_empty() {
        return json!({});
    }
    // Invalid JSON is passed on as a string so a test of bad tool input still can send it.
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| call.arguments.clone().into())
}

impl Dialect for Anthropic {
    fn error_body(&self, status: StatusCode, message: &str) -> Value {
        let kind = match status.as_u16() {
            400 | 422 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        };
        json!({"type": "error", "error": {"type": kind, "message": message}})
    }

    fn message(&self, blocks: &[Block], finish: Finish, usage: Option<Usage>) -> Value {
        let content: Vec<Value> = blocks
            .iter()
            .flat_map(|block| match block {
                Block::Text(text) => vec![json!({"type": "text", "text": text})],
                Block::Thinking { text, signature } => vec![json!({
                    "type": "thinking",
                    "thinking": text,
                    "signature": signature.unwrap_or(DEFAULT_SIGNATURE),
                })],
                Block::RedactedThinking(data) => {
                    vec![json!({"type": "redacted_thinking", "data": data})]
                }
                Block::ToolCall(call) => vec![json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": tool_input(call),
                })],
                Block::ServerSearch(search) => vec![search_call(search), search_result(search)],
                Block::CitedText(cited) => vec![cited_block(cited)],
            })
            .collect();
        let usage = usage.unwrap_or_default();
        json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": finish.anthropic(),
            "stop_sequence": null,
            "usage": usage_json(usage, usage.output),
        })
    }

    fn open(&mut self, usage: Option<Usage>, out: &mut String) {
        let usage = usage_json(usage.unwrap_or_default(), 0);
        let start = json!({
            "type": "message_start",
            "message": {
                "id": self.id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage,
            },
        });
        event(out, "message_start", &start);
    }

    fn text(&mut self, text: &str, out: &mut String) {
        if !matches!(self.open, Open::Text) {
            self.start_block(json!({"type": "text", "text": ""}), out);
            self.open = Open::Text;
        }
        self.delta(json!({"type": "text_delta", "text": text}), out);
    }

    fn reasoning(&mut self, text: &str, signature: Option<&str>, out: &mut String) {
        if !matches!(self.open, Open::Thinking { .. }) {
            self.start_block(json!({"type": "thinking", "thinking": ""}), out);
            self.open = Open::Thinking { signature: None };
        }
        if let (Open::Thinking { signature: last }, Some(signature)) = (&mut self.open, signature) {
            *last = Some(signature.to_owned());
        }
        self.delta(json!({"type": "thinking_delta", "thinking": text}), out);
    }

    fn redacted_thinking(&mut self, data: &str, out: &mut String) {
        self.start_block(json!({"type": "redacted_thinking", "data": data}), out);
        self.stop_block(out);
    }

    fn tool_call(&mut self, call: &ToolCall, _index: u32, out: &mut String) {
        let block = json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}});
        self.start_block(block, out);
        for piece in call.argument_pieces() {
            self.delta(
                json!({"type": "input_json_delta", "partial_json": piece}),
                out,
            );
        }
        self.stop_block(out);
    }

    /// The call streams its input like a tool call; the result block is whole at its start.
    fn server_search(&mut self, search: &ServerSearch, out: &mut String) {
        let mut call = search_call(search);
        let input = std::mem::replace(&mut call["input"], json!({}));
        self.start_block(call, out);
        let partial = input.to_string();
        self.delta(
            json!({"type": "input_json_delta", "partial_json": partial}),
            out,
        );
        self.stop_block(out);
        self.start_block(search_result(search), out);
        self.stop_block(out);
    }

    /// A text block of its own: each citation as a `citations_delta`, then the text.
    fn cited_text(&mut self, cited: &CitedText, out: &mut String) {
        self.start_block(json!({"type": "text", "text": ""}), out);
        for citation in &cited.citations {
            self.delta(
                json!({"type": "citations_delta", "citation": citation}),
                out,
            );
        }
        self.delta(json!({"type": "text_delta", "text": cited.text}), out);
        self.stop_block(out);
    }

    fn close(&mut self, finish: Finish, usage: Option<Usage>, out: &mut String) {
        self.close_block(out);
        let usage = usage.unwrap_or_default();
        let mut delta = json!({
            "type": "message_delta",
            "delta": {"stop_reason": finish.anthropic(), "stop_sequence": null},
            "usage": {"output_tokens": usage.output},
        });
        if let Some(thoughts) = usage.thoughts {
            delta["usage"]["output_tokens_details"] = json!({"thinking_tokens": thoughts});
        }
        event(out, "message_delta", &delta);
        event(out, "message_stop", &json!({"type": "message_stop"}));
    }
}

/// Anthropic's prompt counts are disjoint: uncached input, cache reads, cache writes.
fn usage_json(usage: Usage, output: u64) -> Value {
    json!({
        "input_tokens": usage.input,
        "output_tokens": output,
        "cache_read_input_tokens": usage.cache_read,
        "cache_creation_input_tokens": usage.cache_write,
    })
}
