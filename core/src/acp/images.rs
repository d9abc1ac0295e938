//! Prompt images: where an ACP `image` block's bytes come from — its base64 `data`, else its
//! `uri` when that is a local `file://` path or a `data:` URL — and the block that is logged
//! in its place: the prepared image (`crate::images`), with the `uri` it came with.
//!
//! `acp/prompt.rs` checks a prompt's shape first (`check`), then, on the live session, that the
//! current model has `vision` (`EngineContext::model_sees`), and prepares each image here off the
//! async workers. Any failure is `-32602` before the prompt is queued, so nothing is logged.
//! The log keeps the prepared block; `acp/updates.rs` decodes it back to `UserPart::Image`, so
//! the model's context and `session/load` see what was sent.

use std::io::Read;

use agent_client_protocol_schema::v1::ImageContent;

use crate::images::{self, ACCEPTED_MIME_TYPES, Format};

const ACCEPTED_URIS: &str = "a local file:// path or a data: URL";

/// What can be checked without reading anything, before the prompt is queued: a phrase
/// that reads after "the image".
pub fn check(image: &ImageContent) -> Result<(), String> {
    if !image.data.is_empty() {
        declared(&image.mime_type)?;
        return Ok(images::check_size(image.data.len() / 4 * 3)?);
    }
    match image.uri.as_deref() {
        Some(uri) if uri.starts_with("file://") || uri.starts_with("data:") => Ok(()),
        Some(uri) => Err(format!(
            "has no data, and its uri `{uri}` is not {ACCEPTED_URIS}"
        )),
        None => Err(format!("has neither data nor a uri ({ACCEPTED_URIS})")),
    }
}

/// The image read, checked and downscaled, as the block to log. Blocking (a file read, the
/// decoding): call it off the async workers.
pub fn prepare(mut image: ImageContent) -> Result<ImageContent, String> {
    let (bytes, format) = source(&image)?;
    let prepared = images::prepare(bytes, format)?;
    image.data = prepared.base64();
    image.mime_type = prepared.format.mime_type().to_string();
    Ok(image)
}

/// The image's bytes, and the format its sender declared (none for a file: its bytes say).
fn source(image: &ImageContent) -> Result<(Vec<u8>, Option<Format>), String> {
    if !image.data.is_empty() {
        let format = declared(&image.mime_type)?;
        return Ok((images::decode_base64(&image.data)?, format));
    }
    let uri = image.uri.as_deref().unwrap_or_default();
    match uri.strip_prefix("data:") {
        Some(rest) => data_url(rest),
        None => Ok((read_file(uri)?, None)),
    }
}

fn declared(mime: &str) -> Result<Option<Format>, String> {
    match Format::from_mime(mime) {
        Some(format) => Ok(Some(format)),
        None => Err(format!(
            "has mimeType `{mime}`; the accepted types are {ACCEPTED_MIME_TYPES}"
        )),
    }
}

/// `data:[<mime>];base64,<data>` — the form images take in data URLs; a URL without a MIME
/// type leaves the format to the bytes.
fn data_url(rest: &str) -> Result<(Vec<u8>, Option<Format>), String> {
    let Some((mime, data)) = rest
        .split_once(',')
        .and_then(|(head, data)| Some((head.strip_suffix(";base64")?, data)))
    else {
        return Err("has a data: URL that is not base64 (`data:<mimeType>;base64,…`)".into());
    };
    let format = if mime.is_empty() {
        None
    } else {
        declared(mime)?
    };
    Ok((images::decode_base64(data)?, format))
}

/// A `file://` URI's file, read no further than the size bound.
fn read_file(uri: &str) -> Result<Vec<u8>, String> {
    let path = url::Url::parse(uri)
        .ok()
        .and_then(|url| url.to_file_path().ok())
        .ok_or_else(|| format!("has a uri `{uri}` that is not a local file path"))?;
    let unreadable = |e: std::io::Error| format!("could not be read from {}: {e}", path.display());
    // Only a regular file (where it leads): opening a FIFO waits for a writer, and a device
    // (`/dev/stdin`, the engine's own protocol input) reads on forever — in the session's
    // job, which nothing could then cancel.
    if !std::fs::metadata(&path).map_err(unreadable)?.is_file() {
        return Err(format!(
            "names {}, which is not a regular file",
            path.display()
        ));
    }
    let file = std::fs::File::open(&path).map_err(unreadable)?;
    let size = file.metadata().map_err(unreadable)?.len();
    images::check_size(usize::try_from(size).unwrap_or(usize::MAX))?;
    // Bounded again in case the file grows while it is read.
    let mut bytes = Vec::new();
    file.take(images::MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    images::check_size(bytes.len())?;
    Ok(bytes)
}
