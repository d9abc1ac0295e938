//! An MCP content block as text, the one reading of tool results (`tools/mcp/content.rs`)
//! and prompt messages (`prompts.rs`): text as is, resources by their text or their link,
//! and a placeholder saying what and how large for images, audio and binary resources.

use rmcp::model::{ContentBlock, ResourceContents};

/// One block as text: a placeholder for what cannot be shown as text.
pub fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => placeholder("image", &image.mime_type, &image.data),
        ContentBlock::Audio(audio) => placeholder("audio", &audio.mime_type, &audio.data),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                format!("[resource {uri}: {mime}, {} bytes]", decoded_len(blob))
            }
            _ => "[a resource of a kind Hearth does not know]".into(),
        },
        ContentBlock::ResourceLink(link) => format!("[{}]({})", link.name, link.uri),
        _ => "[content of a kind Hearth does not know]".into(),
    }
}

/// `[image: image/png, 68 bytes]`.
fn placeholder(what: &str, mime: &str, base64: &str) -> String {
    format!("[{what}: {mime}, {} bytes]", decoded_len(base64))
}

/// The size of what `base64` encodes, without decoding it.
fn decoded_len(base64: &str) -> usize {
    let data = base64.trim_end().trim_end_matches('=');
    data.len() * 3 / 4
}
