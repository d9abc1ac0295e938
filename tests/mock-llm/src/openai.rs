//! OpenAI chat-completions rendering (`POST /v1/chat/completions`).

use std::fmt::Write;

use hyper::StatusCode;
use serde_json::{Value, json};

use crate::dialect::{Block, Dialect};
use crate::script::{CitedText, Finish, ServerSearch, ToolCall, Usage};

pub(crate) struct OpenAi {
    id: String,
    model: String,
    created: u64,
}

impl OpenAi {
    pub(crate) fn new(number: u64, model: &str, created: u64) -> OpenAi {
        OpenAi {
            id: format!("chatcmpl-mock-{number}"),
            model: model.to_owned(),
            created,
        }
    }

    fn chunk(&self, choices: Value, extra: Option<(&str, Value)>, out: &mut String) {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        });
        if let Some((key, value)) = extra {
            chunk[key] = value;
        }
        // Writing to a String cannot fail.
        let _ = write!(out, "data: {chunk}\n\n");
    }

    fn delta(&self, delta: Value, out: &mut String) {
        let choice = json!([{"index": 0, "delta": delta, "finish_reason": null}]);
        self.chunk(choice, None, out);
    }
}

/// OpenAI counts cached tokens inside `prompt_tokens` and has no cache writes.
fn usage_json(usage: Usage) -> Value {
    let prompt = usage.input + usage.cache_read + usage.cache_write;
    let mut json = json!({
        "prompt_tokens": prompt,
        "completion_tokens": usage.output,
        "total_tokens": prompt + usage.output,
    });
    if usage.cache_read > 0 {
        json["prompt_tokens_details"] = json!({ "cached_tokens": usage.cache_read });
    }
    if let Some(thoughts) = usage.thoughts {
        json["completion_tokens_details"] = json!({ "reasoning_tokens": thoughts });
    }
    json
}

impl Dialect for OpenAi {
    fn error_body(&self, status: StatusCode, message: &str) -> Value {
        let kind = match status.as_u16() {
            400 | 404 | 413 | 422 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            429 => "rate_limit_error",
            _ => "server_error",
        };
        json!({"error": {"message": message, "type": kind, "code": null}})
    }

    fn message(&self, blocks: &[Block], finish: Finish, usage: Option<Usage>) -> Value {
        let mut content = String::new();
        let mut reasoning = String::new();
        let mut tool_calls = Vec::new();
        for block in blocks {
            match block {
                Block::Text(text) => content.push_str(text),
                Block::CitedText(cited) => content.push_str(&cited.text),
                Block::ServerSearch(_) => {}
                Block::Thinking { text, .. } => reasoning.push_str(text),
                Block::RedactedThinking(_) => {}
                Block::ToolCall(call) => tool_calls.push(json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })),
            }
        }
        let mut message = json!({"role": "assistant", "content": null});
        if !content.is_empty() {
            message["content"] = content.into();
        }
        if !reasoning.is_empty() {
            message["reasoning_content"] = reasoning.into();
        }
        if !tool_calls.is_empty() {
            message["tool_calls"] = tool_calls.into();
        }
        let mut reply = json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish.openai()}],
        });
        if let Some(usage) = usage {
            reply["usage"] = usage_json(usage);
        }
        reply
    }

    fn open(&mut self, _usage: Option<Usage>, out: &mut String) {
        self.delta(json!({"role": "assistant", "content": ""}), out);
    }

    fn text(&mut self, text: &str, out: &mut String) {
        self.delta(json!({"content": text}), out);
    }

    fn reasoning(&mut self, text: &str, _signature: Option<&str>, out: &mut String) {
        self.delta(json!({"reasoning_content": text}), out);
    }

    fn redacted_thinking(&mut self, _data: &str, _out: &mut String) {}

    fn server_search(&mut self, _search: &ServerSearch, _out: &mut String) {}

    fn cited_text(&mut self, cited: &CitedText, out: &mut String) {
        self.text(&cited.text, out);
    }

    fn tool_call(&mut self, call: &ToolCall, index: u32, out: &mut String) {
        // Like OpenAI: the first delta names the call, the rest only extend its arguments.
        let head = json!({
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        });
        self.delta(json!({"tool_calls": [head]}), out);
        for piece in call.argument_pieces() {
            let tail = json!({"index": index, "function": {"arguments": piece}});
            self.delta(json!({"tool_calls": [tail]}), out);
        }
    }

    fn close(&mut self, finish: Finish, usage: Option<Usage>, out: &mut String) {
        let choice = json!([{"index": 0, "delta": {}, "finish_reason": finish.openai()}]);
        self.chunk(choice, None, out);
        if let Some(usage) = usage {
            // As with `stream_options.include_usage`: a last chunk without choices.
            self.chunk(json!([]), Some(("usage", usage_json(usage))), out);
        }
        out.push_str("data: [DONE]\n\n");
    }
}
