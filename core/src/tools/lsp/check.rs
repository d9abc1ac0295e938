//! The diagnostics part of an edit's result: the errors the agent's own `write` or `edit`
//! introduced in the file, so the model sees what it broke without running anything.

use std::path::Path;

use super::diagnostics::{self, Diagnostic, introduced};
use super::session::Opened;
use crate::tools::Context;
use crate::tools::bounds::plural;

/// New errors shown in an edit's result, at most.
const MAX_NEW_ERRORS: usize = 20;

/// The file's diagnostics before a change, to compare with after it.
pub struct Before {
    errors: Vec<Diagnostic>,
}

/// The diagnostics of `path` as it is before the change (`old_text`, `None` for a new file).
/// `None` when no server is configured for the file or it cannot answer: the edit then goes
/// on without diagnostics.
pub async fn before(ctx: &Context, path: &Path, old_text: Option<&str>) -> Option<Before> {
    if !ctx.lsp.serves(path) {
        return None;
    }
    let Some(old_text) = old_text else {
        return Some(Before { errors: Vec::new() });
    };
    let opened = ctx.lsp.open_with(ctx, path, old_text).await.ok()?;
    let errors = ask(ctx, &opened).await.ok()?;
    Some(Before { errors })
}

/// The lines an edit's result gains once `new_text` is on disk: the errors it introduced
/// (at most 20), or that there are none; why there are no diagnostics when the server fails.
pub async fn after(
    ctx: &Context,
    before: Before,
    path: &Path,
    new_text: &str,
    name: &str,
) -> String {
    let opened = match ctx.lsp.open_with(ctx, path, new_text).await {
        Ok(opened) => opened,
        Err(error) => return format!("\nNo diagnostics: {error}\n"),
    };
    let server = opened.server.clone();
    let after = match ask(ctx, &opened).await {
        Ok(after) => after,
        Err(error) => {
            return format!("\nNo diagnostics from the {server} language server: {error}\n");
        }
    };
    let new = introduced(&before.errors, &after);
    let errors = after
        .iter()
        .filter(|d| d.severity == diagnostics::Severity::Error)
        .count();
    if new.is_empty() {
        return match errors {
            0 => format!("\nThe {server} language server reports no errors in {name}.\n"),
            n => format!(
                "\nNo new errors in {name}; the {server} language server still reports {} from before.\n",
                plural(n, "error")
            ),
        };
    }
    let mut out = format!(
        "\nThe {server} language server reports {} this change introduced in {name}:\n",
        plural(new.len(), "new error")
    );
    for error in new.iter().take(MAX_NEW_ERRORS) {
        out.push_str(&format!("{name}:{}\n", error.render(new_text)));
    }
    if new.len() > MAX_NEW_ERRORS {
        out.push_str(&format!(
            "… {} more new errors (lsp_diagnostics lists them)\n",
            new.len() - MAX_NEW_ERRORS
        ));
    }
    out
}

async fn ask(ctx: &Context, opened: &Opened) -> Result<Vec<Diagnostic>, super::client::CallError> {
    diagnostics::current(
        &opened.connection,
        &opened.uri,
        opened.synced,
        opened.timeouts.request,
        &ctx.cancel,
    )
    .await
}
