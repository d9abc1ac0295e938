//! What the LSP tools share: the answer of a call, a failed server call in the model's
//! words, and the text of a file the answer points into.

use std::path::Path;

use crate::lsp::CallError;
use crate::lsp::Opened;
use crate::tools::{Context, Output, ToolError};

/// A failed call, in the model's words.
pub fn server_error(opened: &Opened, error: CallError) -> ToolError {
    let server = &opened.server;
    match error {
        CallError::Ended(reason) if opened.may_restart => ToolError(format!(
            "the {server} language server stopped: {reason}; the next call starts it again"
        )),
        CallError::Ended(reason) => ToolError(format!(
            "the {server} language server stopped again after its restart: {reason}; it is not \
             started again"
        )),
        other => ToolError(format!("the {server} language server: {other}")),
    }
}

/// The text of `path` when it lies in one of the session's roots. A server points into
/// libraries and the standard library too; those are shown as places only, since reading
/// them is what `read`, with its permission check, is for.
pub async fn readable_text(ctx: &Context, path: &Path) -> Option<String> {
    if !ctx.roots.iter().any(|root| path.starts_with(root)) {
        return None;
    }
    ctx.io.read_text(path).await.ok()
}

/// An answer in text.
pub fn text_output(text: String) -> Output {
    Output {
        for_model: text,
        ..Output::default()
    }
}
