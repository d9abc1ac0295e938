//! Local directory walks: ripgrep's `ignore` walker, so `.gitignore`, `.ignore` and git's
//! excludes are honoured — in a stable order (`walk`), or on several threads in none
//! (`walk_parallel`, as ripgrep itself searches: the searches that read every file).

use ignore::{DirEntry, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use super::{IoError, Visit, WalkEntry, WalkSpec};

/// Hidden files are included (`.github/`, `.env.example` matter in a project; ignore files
/// still apply), `.git/` never is, and `.gitignore` is honoured even outside a git repository
/// (a fresh project, a subdirectory copied elsewhere). Entries that cannot be read are skipped.
pub fn walk(
    spec: &WalkSpec,
    cancel: &CancellationToken,
    visit: &mut dyn FnMut(WalkEntry) -> bool,
) -> Result<(), IoError> {
    let mut builder = builder(spec);
    builder.sort_by_file_name(|a, b| a.cmp(b));
    for entry in builder.build() {
        if cancel.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        if !visit(entry_of(entry)) {
            break;
        }
    }
    Ok(())
}

/// The same walk on the walker's threads (one per core, at most 12), in no order.
pub fn walk_parallel<'v>(
    spec: &WalkSpec,
    cancel: &CancellationToken,
    visitor: &(dyn Fn() -> Visit<'v> + Sync),
) -> Result<(), IoError> {
    builder(spec).build_parallel().run(|| {
        let mut visit = visitor();
        let mut seen: u32 = 0;
        Box::new(move |entry| {
            // The token takes a lock to read: the threads look every 64 entries, not at each.
            seen = seen.wrapping_add(1);
            if seen.is_multiple_of(64) && cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            match visit(entry_of(entry)) {
                true => WalkState::Continue,
                false => WalkState::Quit,
            }
        })
    });
    Ok(())
}

fn builder(spec: &WalkSpec) -> WalkBuilder {
    let mut builder = WalkBuilder::new(&spec.root);
    builder
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| !is_git_dir(entry.path()))
        .max_depth(spec.max_depth);
    if let Some(filter) = &spec.filter {
        builder.overrides(filter.clone());
    }
    builder
}

/// Whether `path` names a `.git` entry: read off the path's last bytes, as this runs for every
/// entry of a walk and parsing the path's components each time costs more than the check.
fn is_git_dir(path: &std::path::Path) -> bool {
    let bytes = path.as_os_str().as_encoded_bytes();
    match bytes.strip_suffix(b".git") {
        Some(rest) => {
            rest.is_empty()
                || rest
                    .last()
                    .is_some_and(|&b| std::path::is_separator(b as char))
        }
        None => false,
    }
}

fn entry_of(entry: DirEntry) -> WalkEntry {
    let file_type = entry.file_type();
    WalkEntry {
        depth: entry.depth(),
        is_dir: file_type.is_some_and(|t| t.is_dir()),
        is_file: file_type.is_some_and(|t| t.is_file()),
        path: entry.into_path(),
    }
}
