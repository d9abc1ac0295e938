//! What `list`, `glob` and `grep` share: walking the workspace through its port (`Io::walk`)
//! on the blocking pool, stopping when the turn is cancelled.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::paths::shown;
use super::{Context, ToolError};
use crate::io::{Io, WalkEntry, WalkSpec};

/// `path` relative to `root`, with `/` separators (how globs and the model see paths).
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}

/// Runs a blocking walk off the async workers, with the session's workspace. `work` should
/// stop when the token fires; a cancelled walk reports that it was cancelled.
pub async fn off_thread<T: Send + 'static>(
    ctx: &Context,
    work: impl FnOnce(&dyn Io, &CancellationToken) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let (io, cancel) = (ctx.io.clone(), ctx.cancel.clone());
    let result = tokio::task::spawn_blocking(move || work(&*io, &cancel))
        .await
        .map_err(|e| ToolError(format!("the search failed: {e}")))?;
    if ctx.cancel.is_cancelled() {
        return Err(ToolError("cancelled".into()));
    }
    result
}

/// The first `ctx.limits.search_max_results` of what `pick` keeps of a walk's entries, in
/// walk order, and how many it kept in all (so a listing can say how many it left out).
pub async fn first_of_walk<T: Send + 'static>(
    ctx: &Context,
    spec: WalkSpec,
    mut pick: impl FnMut(WalkEntry) -> Option<T> + Send + 'static,
) -> Result<(Vec<T>, usize), ToolError> {
    let max = ctx.limits.search_max_results;
    off_thread(ctx, move |io, cancel| {
        let mut kept = Vec::new();
        let mut total = 0;
        io.walk(&spec, cancel, &mut |entry| {
            if let Some(item) = pick(entry) {
                total += 1;
                if kept.len() < max {
                    kept.push(item);
                }
            }
            true
        })?;
        Ok((kept, total))
    })
    .await
}

/// Whether `path` is a directory; an error naming it when it does not exist.
pub async fn is_dir(ctx: &Context, path: &Path) -> Result<bool, ToolError> {
    match ctx.io.stat(path).await {
        Ok(Some(meta)) => Ok(meta.is_dir),
        // Unreadable counts as absent, as the model can do nothing else with either.
        _ => Err(ToolError(format!("{} does not exist", shown(ctx, path)))),
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
