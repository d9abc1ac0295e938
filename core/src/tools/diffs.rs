//! What `write` and `edit` share: reading the current text, applying a prepared diff only if
//! the file did not change since the user saw the diff, and reporting the change (an ACP
//! `diff` block for the client, a compact unified diff for the model).

use std::path::Path;

use serde_json::json;
use similar::TextDiff;

use super::bounds::cap;
use super::line_endings::without_cr;
use super::lsp;
use super::paths::shown;
use super::{Access, Context, Diff, Location, Output, Planned, ToolContent, ToolError};

/// The unified diff shown to the model is cut past this size: it confirms the change, the
/// model already knows what it asked for.
const MAX_MODEL_DIFF_BYTES: usize = 8 * 1024;

/// A change `prepare` could not plan from what the file holds (it cannot be read, or an edit
/// does not apply), kept for `run` to report: why it failed tells the model something of the
/// file — that it exists, what kind it is, whether a guess of its text matched — so the call
/// is planned as a read of it, which outside the workspace asks the user first, in every
/// mode. The model learns nothing of a file it may not read before the user allows it.
pub fn unplanned<P>(title: String, path: &Path, why: ToolError) -> Planned<Result<P, ToolError>> {
    Planned::new(
        title,
        vec![Location {
            path: path.to_path_buf(),
            line: None,
        }],
        Access::Read(vec![path.to_path_buf()]),
        Err(why),
    )
}

/// The file's current text, or `None` when it does not exist yet.
pub async fn current_text(ctx: &Context, path: &Path) -> Result<Option<String>, ToolError> {
    match ctx.io.read_text(path).await {
        Ok(text) => Ok(Some(text)),
        // Existence is checked with a stat (local: ACP has none): a client may fail to read a
        // file for another reason, which must not turn an overwrite into a "new file" diff.
        Err(_) if matches!(ctx.io.stat(path).await, Ok(None)) => Ok(None),
        Err(e) => Err(ToolError(e.0)),
    }
}

/// Writes `diff.new_text`, unless the file changed since the diff was computed (the user
/// approved that diff, not another one).
async fn apply(ctx: &Context, diff: &Diff) -> Result<(), ToolError> {
    if current_text(ctx, &diff.path).await? != diff.old_text {
        return Err(ToolError(format!(
            "{} changed since this change was prepared; read it again and retry",
            shown(ctx, &diff.path)
        )));
    }
    ctx.io
        .write_text(&diff.path, &diff.new_text)
        .await
        .map_err(|e| ToolError(e.0))
}

/// Applies `diff` and reports it: `output`, and, when a language server serves the file, the
/// errors the change introduced (`lsp::change_report`).
pub async fn apply_and_report(
    ctx: &Context,
    diff: &Diff,
    headline: &str,
) -> Result<Output, ToolError> {
    apply(ctx, diff).await?;
    let mut output = output(ctx, diff, headline);
    let name = shown(ctx, &diff.path);
    let old_text = diff.old_text.as_deref();
    if let Some(found) = lsp::change_report(ctx, &diff.path, old_text, &diff.new_text, &name).await
    {
        output.for_model.push_str(&found);
    }
    Ok(output)
}

/// The result of an applied change: `headline` and the unified diff for the model (without the
/// `\r` of CRLF lines), the diff block for the client (the file's texts as they are).
fn output(ctx: &Context, diff: &Diff, headline: &str) -> Output {
    let old = without_cr(diff.old_text.as_deref().unwrap_or(""));
    let new = without_cr(&diff.new_text);
    let text_diff = TextDiff::from_lines(old.as_ref(), new.as_ref());
    let name = shown(ctx, &diff.path);
    let unified = text_diff
        .unified_diff()
        .context_radius(2)
        .header(&name, &name)
        .to_string();
    let (kept, cut) = cap(&unified, MAX_MODEL_DIFF_BYTES);
    let mut for_model = format!("{headline}\n\n{kept}");
    if cut {
        for_model.push_str("\n… [diff cut; read the file to see the rest]\n");
    }
    let (added, removed) = line_counts(&text_diff);
    Output {
        for_model,
        content: vec![ToolContent::Diff(diff.clone())],
        raw_output: Some(json!({ "path": diff.path, "added": added, "removed": removed })),
        ..Output::default()
    }
}

/// The 1-based line of the first difference between `old` and `new`.
pub fn first_changed_line(old: &str, new: &str) -> u32 {
    let same = old
        .lines()
        .zip(new.lines())
        .take_while(|(a, b)| a == b)
        .count();
    u32::try_from(same + 1).unwrap_or(u32::MAX)
}

fn line_counts<'a>(diff: &TextDiff<'a, 'a, 'a, str>) -> (usize, usize) {
    use similar::ChangeTag;
    diff.iter_all_changes()
        .fold((0, 0), |(added, removed), change| match change.tag() {
            ChangeTag::Insert => (added + 1, removed),
            ChangeTag::Delete => (added, removed + 1),
            ChangeTag::Equal => (added, removed),
        })
}
