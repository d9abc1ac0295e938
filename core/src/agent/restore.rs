//! Putting files back as their checkpoints recorded them, for `/undo` and rewind: working out
//! what each file goes back to — and which ones someone changed after the agent did, which
//! are left alone — then doing it through the workspace port.
//!
//! For each path, its rows are walked newest first: a file as the turn left it (current hash =
//! after-hash) goes back to the row's old text, or is deleted if the agent created it; a file
//! removed since is recreated (that overwrites nothing); a file already as it was is left;
//! anything else — someone changed it — stops the walk there and is reported as a conflict.
//! Files are read, written and removed through the session's `Io` (`remove_file` is local even
//! for the client backend: ACP has no delete).
//!
//! Tests: end to end in `core/tests/undo.rs`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::checkpoint::hash;
use crate::io::Io;
use crate::session::Session;
use crate::store::CheckpointRow;

/// A file put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub path: PathBuf,
    pub how: How,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// Its earlier text was written back.
    Rewritten,
    /// The agent created it: it was removed.
    Deleted,
    /// It was gone (removed after the agent's change); its earlier text was written back,
    /// which overwrites nothing.
    Recreated,
}

/// A file left as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub path: PathBuf,
    pub reason: String,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub restored: Vec<Restored>,
    pub conflicts: Vec<Conflict>,
}

/// What is at a path now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Now {
    Absent,
    /// A text file, by its hash.
    Text(String),
    Unreadable(String),
}

/// What one path goes back to: `target` is `Some(None)` for "no file", `Some(Some(text))`
/// for a text, `None` for "as it is".
#[derive(Debug, PartialEq, Eq)]
struct PathPlan<'a> {
    target: Option<Option<&'a str>>,
    conflict: Option<String>,
}

/// Undoes `rows` (newest first; several turns' rows undo one turn after another) and says
/// what was put back and what was left. With `dry_run` nothing is touched: the outcome is
/// what would happen.
pub async fn revert(io: &dyn Io, rows: &[&CheckpointRow], dry_run: bool) -> Outcome {
    // By path, so that reports read in a stable order.
    let mut paths: Vec<&str> = rows.iter().map(|r| r.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    let mut outcome = Outcome::default();
    for path in paths {
        let file = Path::new(path);
        let now = state(io, file).await;
        let of_path: Vec<&CheckpointRow> =
            rows.iter().copied().filter(|r| r.path == path).collect();
        let plan = plan(&now, &of_path);
        if let Some(target) = plan.target.filter(|t| !same(&now, *t)) {
            let how = match (target, &now) {
                (None, _) => How::Deleted,
                (Some(_), Now::Absent) => How::Recreated,
                (Some(_), _) => How::Rewritten,
            };
            match put(io, file, target, dry_run).await {
                Ok(()) => outcome.restored.push(Restored {
                    path: file.to_path_buf(),
                    how,
                }),
                Err(reason) => outcome.conflicts.push(Conflict {
                    path: file.to_path_buf(),
                    reason,
                }),
            }
        }
        if let Some(reason) = plan.conflict {
            outcome.conflicts.push(Conflict {
                path: file.to_path_buf(),
                reason,
            });
        }
    }
    outcome
}

/// Where files are put back: the session's workspace, the client's when it serves files.
/// Nothing cancels it: a turn half put back is worse than a whole one, and it is a few file
/// operations.
pub fn workspace(session: &Session) -> Arc<dyn Io> {
    let never = CancellationToken::new();
    session
        .services()
        .workspace(&*session.ctx().workspaces(), &never)
}

/// One line per file of `outcome`, paths shown relative to `cwd` when inside it.
pub fn describe(outcome: &Outcome, cwd: &Path) -> String {
    let shown = |path: &Path| {
        path.strip_prefix(cwd)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    };
    let mut lines = Vec::new();
    for restored in &outcome.restored {
        let how = match restored.how {
            How::Rewritten => "restored",
            How::Deleted => "deleted (the agent created it)",
            How::Recreated => "recreated (it had been removed since)",
        };
        lines.push(format!("- {}: {how}", shown(&restored.path)));
    }
    if !outcome.conflicts.is_empty() {
        lines.push("Not restored:".to_string());
    }
    for conflict in &outcome.conflicts {
        lines.push(format!("- {}: {}", shown(&conflict.path), conflict.reason));
    }
    lines.join("\n")
}

/// Walks one path's checkpoints newest first, each taking the file back to before its turn
/// when the file is as that turn left it. A file someone else changed stops the walk: what
/// they wrote is never overwritten.
fn plan<'a>(now: &Now, rows: &[&'a CheckpointRow]) -> PathPlan<'a> {
    let mut state = match now {
        Now::Absent => None,
        Now::Text(hash) => Some(hash.clone()),
        Now::Unreadable(why) => {
            return PathPlan {
                target: None,
                conflict: Some(format!("it cannot be read ({why}); left as it is")),
            };
        }
    };
    let mut target = None;
    for row in rows {
        let as_left = state == row.after_hash;
        // Gone since: writing its earlier text back loses nobody's work.
        let gone = state.is_none() && row.content.is_some();
        if as_left || gone {
            target = Some(row.content.as_deref());
            state.clone_from(&row.content_hash);
        } else if state != row.content_hash {
            let reason = if target.is_none() {
                "it changed after the agent's edit; left as it is"
            } else {
                "it changed between two of the agent's turns; put back only as far as that change"
            };
            return PathPlan {
                target,
                conflict: Some(reason.to_string()),
            };
        }
    }
    PathPlan {
        target,
        conflict: None,
    }
}

fn same(now: &Now, target: Option<&str>) -> bool {
    match (now, target) {
        (Now::Absent, None) => true,
        (Now::Text(current), Some(text)) => *current == hash(text),
        _ => false,
    }
}

/// The file's state, read through the workspace (a client's unsaved buffer counts).
async fn state(io: &dyn Io, path: &Path) -> Now {
    match io.read_text(path).await {
        Ok(text) => Now::Text(hash(&text)),
        // Absence is told by a stat: a read can fail for other reasons.
        Err(e) => match io.stat(path).await {
            Ok(None) => Now::Absent,
            _ => Now::Unreadable(e.0),
        },
    }
}

async fn put(io: &dyn Io, path: &Path, target: Option<&str>, dry_run: bool) -> Result<(), String> {
    if dry_run {
        return Ok(());
    }
    let done = match target {
        Some(text) => io.write_text(path, text).await,
        None => io.remove_file(path).await,
    };
    done.map_err(|e| format!("it could not be put back: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(content: Option<&str>, after: Option<&str>) -> CheckpointRow {
        CheckpointRow {
            id: 0,
            message_id: "m".into(),
            path: "/w/a".into(),
            content: content.map(str::to_string),
            content_hash: content.map(hash),
            after_hash: after.map(hash),
            undone: false,
        }
    }

    fn text(t: &str) -> Now {
        Now::Text(hash(t))
    }

    #[test]
    fn goes_back_through_turns_while_the_file_is_as_the_agent_left_it() {
        let (one, two) = (row(Some("A"), Some("B")), row(Some("B"), Some("C")));
        let plan = plan(&text("C"), &[&two, &one]);
        assert_eq!(plan.target, Some(Some("A")));
        assert_eq!(plan.conflict, None);
    }

    #[test]
    fn a_file_changed_since_is_left_alone() {
        let edited = row(Some("A"), Some("B"));
        let plan = plan(&text("mine"), &[&edited]);
        assert_eq!(plan.target, None);
        assert!(plan.conflict.unwrap().contains("changed after"));
    }

    #[test]
    fn a_change_between_turns_stops_the_walk_there() {
        let (one, two) = (row(Some("A"), Some("B")), row(Some("B'"), Some("C")));
        let plan = plan(&text("C"), &[&two, &one]);
        assert_eq!(plan.target, Some(Some("B'")));
        assert!(plan.conflict.unwrap().contains("between"));
    }

    #[test]
    fn a_created_file_goes_and_a_removed_one_comes_back() {
        assert_eq!(
            plan(&text("new"), &[&row(None, Some("new"))]).target,
            Some(None)
        );
        assert_eq!(
            plan(&Now::Absent, &[&row(Some("A"), Some("B"))]).target,
            Some(Some("A"))
        );
        // Created, removed again: already as it was.
        let created = row(None, Some("new"));
        let gone = plan(&Now::Absent, &[&created]);
        assert_eq!((gone.target, gone.conflict), (None, None));
    }

    #[test]
    fn an_unreadable_file_is_left_alone() {
        let edited = row(Some("A"), Some("B"));
        let plan = plan(&Now::Unreadable("binary".into()), &[&edited]);
        assert!(plan.conflict.unwrap().contains("binary"));
    }
}
