//! A tool result of an MCP server, as the model and the client see it: text as is, resources
//! by their text or their link, structured content as JSON when the server sent no text, and
//! a placeholder for what cannot be shown as text (images, audio, binary resources) — the
//! model takes no images yet; the client gets the images themselves too.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::mcp::block_text;
use crate::tools::bounds::cap;
use crate::tools::{Output, ToolContent, ToolError};

/// The result for the model, cut to `limit` bytes; an `isError` result is a tool error, so
/// the model reads it as one.
pub fn output(result: CallToolResult, limit: usize) -> Result<Output, ToolError> {
    let text = text(&result);
    let (kept, truncated) = cap(&text, limit);
    let shown = if truncated {
        format!("{kept}\n… [cut: the result has {} bytes]", text.len())
    } else {
        text.clone()
    };
    if result.is_error == Some(true) {
        return Err(ToolError(if shown.is_empty() {
            "the tool failed without saying why".into()
        } else {
            shown
        }));
    }
    let shown = if shown.is_empty() {
        "(no output)".to_owned()
    } else {
        shown
    };
    let mut content = vec![ToolContent::Text(shown.clone())];
    content.extend(result.content.iter().filter_map(|block| match block {
        ContentBlock::Image(image) => Some(ToolContent::Image {
            mime_type: image.mime_type.clone(),
            data: image.data.clone(),
        }),
        _ => None,
    }));
    Ok(Output {
        for_model: shown,
        content,
        raw_output: Some(summary(&result, truncated)),
        ..Output::default()
    })
}

/// Every block as text, one after the other.
fn text(result: &CallToolResult) -> String {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    let has_text = result
        .content
        .iter()
        .any(|block| matches!(block, ContentBlock::Text(_)));
    if let (false, Some(structured)) = (has_text, &result.structured_content) {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    parts.join("\n")
}

/// What the client's raw output shows: the kinds of the blocks, not their bytes.
fn summary(result: &CallToolResult, truncated: bool) -> Value {
    let kinds: Vec<&str> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(_) => "text",
            ContentBlock::Image(_) => "image",
            ContentBlock::Audio(_) => "audio",
            ContentBlock::Resource(_) => "resource",
            ContentBlock::ResourceLink(_) => "resource_link",
            _ => "other",
        })
        .collect();
    json!({
        "content": kinds,
        "structured": result.structured_content.is_some(),
        "truncated": truncated,
    })
}

#[cfg(test)]
mod tests {
    use rmcp::model::{EmbeddedResource, ImageContent, Resource, ResourceContents, TextContent};

    use super::*;

    fn result(content: Vec<ContentBlock>) -> CallToolResult {
        let mut result = CallToolResult::default();
        result.content = content;
        result
    }

    #[test]
    fn every_kind_of_block_reads_as_text() {
        let link = Resource::new("test://a/b", "b");
        let blocks = vec![
            ContentBlock::Text(TextContent::new("hello")),
            ContentBlock::Image(ImageContent::new("iVBORw0KGgo=", "image/png")),
            ContentBlock::Resource(EmbeddedResource::new(ResourceContents::text(
                "note", "test://n",
            ))),
            ContentBlock::ResourceLink(link),
        ];
        let out = output(result(blocks), 1000).unwrap();
        assert_eq!(
            out.for_model,
            "hello\n[image: image/png, 8 bytes]\nnote\n[b](test://a/b)"
        );
        assert_eq!(
            out.content,
            [
                ToolContent::Text(out.for_model.clone()),
                ToolContent::Image {
                    mime_type: "image/png".into(),
                    data: "iVBORw0KGgo=".into()
                }
            ],
            "the client gets the image itself"
        );
        assert_eq!(
            out.raw_output.unwrap()["content"],
            json!(["text", "image", "resource", "resource_link"])
        );
    }

    #[test]
    fn structured_content_shows_only_without_text() {
        let mut with_text = result(vec![ContentBlock::Text(TextContent::new("5"))]);
        with_text.structured_content = Some(json!({ "sum": 5 }));
        assert_eq!(output(with_text, 1000).unwrap().for_model, "5");
        let mut alone = result(Vec::new());
        alone.structured_content = Some(json!({ "sum": 5 }));
        assert_eq!(output(alone, 1000).unwrap().for_model, "{\n  \"sum\": 5\n}");
        assert_eq!(
            output(result(Vec::new()), 1000).unwrap().for_model,
            "(no output)"
        );
    }

    #[test]
    fn errors_are_tool_errors_and_text_is_bounded() {
        let mut failed = result(vec![ContentBlock::Text(TextContent::new("boom"))]);
        failed.is_error = Some(true);
        assert_eq!(output(failed, 1000).unwrap_err(), ToolError("boom".into()));
        let long = result(vec![ContentBlock::Text(TextContent::new("x".repeat(500)))]);
        let out = output(long, 100).unwrap();
        assert!(
            out.for_model.starts_with(&"x".repeat(100)),
            "{}",
            out.for_model
        );
        assert!(out.for_model.ends_with("… [cut: the result has 500 bytes]"));
        assert_eq!(out.raw_output.unwrap()["truncated"], true);
    }
}
