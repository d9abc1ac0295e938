//! What `list`, `glob` and `grep` share: walking the workspace through its port (`Io::walk`,
//! and `Io::walk_parallel` for the searches that read every file) on the blocking pool,
//! stopping when the turn is cancelled.

use std::borrow::Cow;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use super::paths::shown;
use super::{Context, ToolError};
use crate::io::{Io, WalkEntry, WalkSpec};

/// `path` relative to `root` (whose text is `root_text`) for matching: the text after
/// `root`'s as the walk under `root` made it, without parsing either path's components (this
/// runs for every file of a search); [`relative`] when the path is not UTF-8 or not under
/// `root` as spelled. Separators may be the platform's, which globs accept.
pub fn relative_text<'p>(root_text: &str, root: &Path, path: &'p Path) -> Cow<'p, str> {
    let fast = path
        .to_str()
        .and_then(|text| text.strip_prefix(root_text))
        .map(|rest| rest.trim_start_matches(std::path::is_separator))
        .filter(|rest| !rest.is_empty());
    match fast {
        Some(rest) => Cow::Borrowed(rest),
        None => Cow::Owned(relative(root, path)),
    }
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

/// The first `ctx.limits.search_max_results` of what `pick` finds in a walk's entries, in
/// their order (a path sorts where the sorted walk meets it), and how many it found in all.
/// The walk runs on several threads, each with its own `state` (what `pick` reuses from file
/// to file), so a search reads the tree as fast as ripgrep does; what it keeps is the same as
/// a sorted walk's, whatever order the threads meet the files in.
pub async fn first_in_order<S: Send, T: Ord + Send + 'static>(
    ctx: &Context,
    spec: WalkSpec,
    state: impl Fn() -> S + Send + Sync + 'static,
    pick: impl Fn(&mut S, WalkEntry, &mut Vec<T>) + Send + Sync + 'static,
) -> Result<(Vec<T>, usize), ToolError> {
    let max = ctx.limits.search_max_results;
    off_thread(ctx, move |io, cancel| {
        let kept = Mutex::new(Smallest::new(max));
        io.walk_parallel(&spec, cancel, &|| {
            let (mut own, mut found) = (state(), Vec::new());
            // Each thread keeps its own smallest, handed over when the walk drops its visitor.
            let mut local = Handover {
                own: Smallest::new(max),
                to: &kept,
            };
            let pick = &pick;
            Box::new(move |entry| {
                pick(&mut own, entry, &mut found);
                found.drain(..).for_each(|item| local.own.add(item));
                true
            })
        })?;
        Ok(kept
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .sorted())
    })
    .await
}

/// One thread's part of [`first_in_order`], merged into the whole when the thread is done.
struct Handover<'a, T: Ord> {
    own: Smallest<T>,
    to: &'a Mutex<Smallest<T>>,
}

impl<T: Ord> Drop for Handover<'_, T> {
    fn drop(&mut self) {
        let own = std::mem::replace(&mut self.own, Smallest::new(0));
        let mut whole = self.to.lock().unwrap_or_else(|p| p.into_inner());
        whole.total += own.total;
        for item in own.heap {
            whole.keep(item);
        }
    }
}

/// The `max` smallest items of those added, and how many were added.
struct Smallest<T> {
    heap: BinaryHeap<T>,
    max: usize,
    total: usize,
}

impl<T: Ord> Smallest<T> {
    fn new(max: usize) -> Self {
        Smallest {
            heap: BinaryHeap::with_capacity(max + 1),
            max,
            total: 0,
        }
    }

    fn add(&mut self, item: T) {
        self.total += 1;
        self.keep(item);
    }

    /// Keeps `item` if it is among the smallest, without counting it.
    fn keep(&mut self, item: T) {
        if self.heap.len() < self.max {
            self.heap.push(item);
        } else if self.heap.peek().is_some_and(|largest| item < *largest) {
            self.heap.pop();
            self.heap.push(item);
        }
    }

    fn sorted(self) -> (Vec<T>, usize) {
        (self.heap.into_sorted_vec(), self.total)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::testing::{context, tree};

    #[tokio::test]
    async fn the_parallel_search_keeps_what_the_sorted_walk_meets_first() {
        let files: Vec<String> = ["a.txt", "a/b.txt", "a-b/c.txt", "a/z/y.txt", "b.txt"]
            .into_iter()
            .map(String::from)
            .chain((0..40).map(|n| format!("many/{n:02}.txt")))
            .collect();
        let entries: Vec<(&str, &[u8])> = files.iter().map(|f| (f.as_str(), &b""[..])).collect();
        let dir = tree(&entries);
        for max in [3, 7, 100] {
            let mut ctx = context(dir.path());
            ctx.limits.search_max_results = max;
            let spec = WalkSpec::new(dir.path());
            let sorted = first_of_walk(&ctx, spec.clone(), |e| e.is_file.then_some(e.path));
            let sorted = sorted.await.unwrap();
            let parallel = first_in_order(
                &ctx,
                spec,
                || (),
                |(), e, found| {
                    if e.is_file {
                        found.push(e.path);
                    }
                },
            );
            assert_eq!(parallel.await.unwrap(), sorted, "max {max}");
            assert_eq!(sorted.1, 45);
        }
    }
}
