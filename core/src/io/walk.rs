//! Local directory walks: ripgrep's `ignore` walker, so `.gitignore`, `.ignore` and git's
//! excludes are honoured, in a stable order.

use ignore::WalkBuilder;
use tokio_util::sync::CancellationToken;

use super::{IoError, WalkEntry, WalkSpec};

/// Hidden files are included (`.github/`, `.env.example` matter in a project; ignore files
/// still apply), `.git/` never is, and `.gitignore` is honoured even outside a git repository
/// (a fresh project, a subdirectory copied elsewhere). Entries that cannot be read are skipped.
pub fn walk(
    spec: &WalkSpec,
    cancel: &CancellationToken,
    visit: &mut dyn FnMut(WalkEntry) -> bool,
) -> Result<(), IoError> {
    let mut builder = WalkBuilder::new(&spec.root);
    builder
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b))
        .max_depth(spec.max_depth);
    if let Some(filter) = &spec.filter {
        builder.overrides(filter.clone());
    }
    for entry in builder.build() {
        if cancel.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        let file_type = entry.file_type();
        let entry = WalkEntry {
            depth: entry.depth(),
            is_dir: file_type.is_some_and(|t| t.is_dir()),
            is_file: file_type.is_some_and(|t| t.is_file()),
            path: entry.into_path(),
        };
        if !visit(entry) {
            break;
        }
    }
    Ok(())
}
