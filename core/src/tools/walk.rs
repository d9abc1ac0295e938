//! Directory walks for `list`, `glob` and `grep`: ripgrep's `ignore` walker, so `.gitignore`,
//! `.ignore` and git's excludes are honoured, in a stable order. Walks always run locally
//! (ACP has no method for them) on the blocking pool, stopping when the turn is cancelled.

use std::path::Path;

use ignore::WalkBuilder;
use tokio_util::sync::CancellationToken;

use super::paths::shown;
use super::{Context, ToolError};

/// A walker over `root`. Hidden files are included (`.github/`, `.env.example` matter in a
/// project; ignore files still apply), `.git/` never is, and `.gitignore` is honoured even
/// outside a git repository (a fresh project, a subdirectory copied elsewhere).
pub fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    builder
}

/// `path` relative to `root`, with `/` separators (how globs and the model see paths).
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

/// Runs a blocking walk off the async workers. `work` should check the token between
/// entries; a cancelled walk reports that it was cancelled.
pub async fn off_thread<T: Send + 'static>(
    ctx: &Context,
    work: impl FnOnce(&CancellationToken) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let cancel = ctx.cancel.clone();
    let result = tokio::task::spawn_blocking(move || work(&cancel))
        .await
        .map_err(|e| ToolError(format!("the search failed: {e}")))?;
    if ctx.cancel.is_cancelled() {
        return Err(ToolError("cancelled".into()));
    }
    result
}

/// Whether `path` is a directory; an error naming it when it does not exist.
pub async fn is_dir(ctx: &Context, path: &Path) -> Result<bool, ToolError> {
    match tokio::fs::metadata(path).await {
        Ok(meta) => Ok(meta.is_dir()),
        Err(_) => Err(ToolError(format!("{} does not exist", shown(ctx, path)))),
    }
}

/// An error unless `path` is a directory.
pub async fn require_dir(ctx: &Context, path: &Path) -> Result<(), ToolError> {
    if is_dir(ctx, path).await? {
        Ok(())
    } else {
        Err(ToolError(format!(
            "{} is a file, not a directory",
            shown(ctx, path)
        )))
    }
}
