//! Which git repository a directory is in, and on which branch — read from `.git/HEAD`
//! directly (no git crate, no `git` process), so it costs a few small reads and works where
//! git is not installed.

use std::path::{Path, PathBuf};

/// The repository holding a directory, as it was when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The directory holding `.git` (the work tree's top).
    pub root: PathBuf,
    pub head: Head,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    Branch(String),
    /// A checked-out commit with no branch (its id, abbreviated as git does).
    Detached(String),
    /// `HEAD` could not be read or says something this reader does not know.
    Unknown,
}

/// The repository `dir` is in: the nearest directory at or above it with a `.git` directory,
/// or a `.git` file pointing at one (`gitdir: …`, as worktrees and submodules have).
pub fn find(dir: &Path) -> Option<Repo> {
    dir.ancestors().find_map(|root| {
        let dot_git = root.join(".git");
        let git_dir = if dot_git.is_dir() {
            dot_git
        } else if dot_git.is_file() {
            linked_git_dir(&dot_git, root)?
        } else {
            return None;
        };
        Some(Repo {
            root: root.to_path_buf(),
            head: head(&git_dir),
        })
    })
}

/// The directory a `.git` file names; a relative path is relative to the work tree.
fn linked_git_dir(dot_git: &Path, root: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    (!target.is_empty()).then(|| root.join(target))
}

fn head(git_dir: &Path) -> Head {
    let Ok(text) = std::fs::read_to_string(git_dir.join("HEAD")) else {
        return Head::Unknown;
    };
    let text = text.trim();
    if let Some(reference) = text.strip_prefix("ref:") {
        let reference = reference.trim();
        return Head::Branch(
            reference
                .strip_prefix("refs/heads/")
                .unwrap_or(reference)
                .to_string(),
        );
    }
    let is_commit_id = text.len() >= 40 && text.bytes().all(|b| b.is_ascii_hexdigit());
    if is_commit_id {
        Head::Detached(text[..12].to_string())
    } else {
        Head::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_branch_found_from_a_subdirectory() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join(".git/HEAD"), "ref: refs/heads/feature/x\n");
        let sub = dir.path().join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(
            find(&sub),
            Some(Repo {
                root: dir.path().to_path_buf(),
                head: Head::Branch("feature/x".into()),
            })
        );
    }

    #[test]
    fn a_detached_head_shows_its_commit() {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join(".git/HEAD"),
            "4d7bcad0e1f2a3b4c5d6e7f8091a2b3c4d5e6f70\n",
        );
        assert_eq!(
            find(dir.path()).unwrap().head,
            Head::Detached("4d7bcad0e1f2".into())
        );
    }

    #[test]
    fn a_worktree_follows_its_gitdir_file() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main");
        write(&main.join(".git/HEAD"), "ref: refs/heads/main\n");
        write(
            &main.join(".git/worktrees/wt/HEAD"),
            "ref: refs/heads/prompt\n",
        );
        let worktree = dir.path().join("wt");
        write(
            &worktree.join(".git"),
            "gitdir: ../main/.git/worktrees/wt\n",
        );
        let repo = find(&worktree).unwrap();
        assert_eq!(repo.root, worktree);
        assert_eq!(repo.head, Head::Branch("prompt".into()));
    }

    #[test]
    fn no_repository_and_an_unreadable_head() {
        let dir = tempfile::tempdir().unwrap();
        // A temp dir may itself sit inside a repository on a developer's machine: only
        // answers rooted in the temp dir are this test's.
        let outside = find(dir.path()).filter(|r| r.root.starts_with(dir.path()));
        assert_eq!(outside, None);
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(find(dir.path()).unwrap().head, Head::Unknown);
    }
}
