//! The diagnostics part of an edit's result: the errors the agent's own `write` or `edit`
//! introduced in the file, so the model sees what it broke without running anything.
//!
//! `tools/diffs.rs` `apply_and_report` (used by `edit` and `write`) writes the approved diff
//! first, then `report` sends the file's server the old text and asks for its diagnostics,
//! then the new text and asks again — the file's own diagnostics come from the text Hearth
//! sends, not the disk — and appends to the result the errors that are new (matched by
//! severity, source, code and message, not position, since an edit moves lines; at most 20,
//! with a line saying how many more), or that there are none. A file no server is configured
//! for costs nothing; an unavailable server leaves the result as it was.

use std::path::Path;

use crate::lsp::Opened;
use crate::lsp::diagnostics::{self, Diagnostic, introduced};
use crate::tools::Context;
use crate::tools::bounds::plural;

/// New errors shown in an edit's result, at most.
const MAX_NEW_ERRORS: usize = 20;

/// What an applied change adds to its result when a server serves the file: the errors the
/// change introduced (at most 20), or that there are none. It runs after the write, so the
/// approved change lands at once: the server is sent the old text, then the new one (the
/// file's own diagnostics come from the text Hearth sends, not from the disk). `None` when no
/// server serves the file or the server is unavailable: the result stays as it was.
pub async fn report(
    ctx: &Context,
    path: &Path,
    old_text: Option<&str>,
    new_text: &str,
    name: &str,
) -> Option<String> {
    if !ctx.lsp.serves(path) {
        return None;
    }
    let before = match old_text {
        None => Vec::new(),
        Some(old_text) => match diagnostics_of(ctx, path, old_text).await? {
            Ok((_, before)) => before,
            Err(failed) => return Some(failed),
        },
    };
    let (server, after) = match diagnostics_of(ctx, path, new_text).await? {
        Ok(found) => found,
        Err(failed) => return Some(failed),
    };
    Some(render(&server, &before, &after, new_text, name))
}

/// The server's diagnostics of `text` as `path`'s content, with the server's name; `None`
/// when the server is unavailable, an error line when it failed to answer.
async fn diagnostics_of(
    ctx: &Context,
    path: &Path,
    text: &str,
) -> Option<Result<(String, Vec<Diagnostic>), String>> {
    let opened = ctx.lsp.open_with(ctx, path, text).await.ok()?;
    Some(match ask(ctx, &opened).await {
        Ok(found) => Ok((opened.server.clone(), found)),
        Err(error) => Err(format!(
            "\nNo diagnostics from the {} language server: {error}\n",
            opened.server
        )),
    })
}

fn render(
    server: &str,
    before: &[Diagnostic],
    after: &[Diagnostic],
    new_text: &str,
    name: &str,
) -> String {
    let new = introduced(before, after);
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

async fn ask(ctx: &Context, opened: &Opened) -> Result<Vec<Diagnostic>, crate::lsp::CallError> {
    diagnostics::current(
        &opened.connection,
        &opened.uri,
        opened.synced,
        &opened.timeouts,
        &ctx.cancel,
    )
    .await
}
