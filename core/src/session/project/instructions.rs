//! Project instructions: the `AGENTS.md` files (else `CLAUDE.md`, else `GEMINI.md`) of the
//! workspace root and each parent up to the repository root, after the user's own
//! (`<config dir>/AGENTS.md`). They are read once when a session comes up and shown in its
//! system prompt; a file that changes later reaches the model as a user message when the next
//! turn begins, so the system prompt — the provider's cached prefix — never changes.
//!
//! The files are read from the local disk, not through the client: they configure the agent,
//! and are needed before the client's file system could be asked.
//!
//! Where: the cwd and each parent up to the repository root (only the cwd outside a
//! repository), after the user's own `<configDir>/AGENTS.md` (config key `configDir`, default
//! the platform config dir's `hearth`, e.g. `~/.config/hearth`; tests point it at a temp dir).
//! Order: the user's, then outermost to innermost — the innermost wins, and the prompt says so.
//! Bounds: 32 KiB a file, 64 KiB in all, spent from the innermost file outward; a cut is at a
//! char boundary with a marker naming the bytes left out and the path, and a non-UTF-8 file is
//! decoded lossily with a marker too. When a turn begins, [`instructions_changed`] reads them
//! again: a changed, new or removed file reaches the model as a user message, remembered in the
//! log.
//!
//! Tests: end to end in `core/tests/instructions.rs`.

use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::git;
use crate::chat::Message;
use crate::session::Session;

/// The most of one file shown to the model.
pub const FILE_LIMIT: usize = 32 * 1024;
/// The most of all files together (in the system prompt, or in one change message).
pub const TOTAL_LIMIT: usize = 64 * 1024;
/// The names read in a directory, the first that exists wins.
const NAMES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "GEMINI.md"];
/// The most read of one file — enough to show it and to notice most changes past the cut,
/// without reading a runaway file (or a link to a device) whole.
const READ_LIMIT: u64 = 1024 * 1024;

/// An instruction file as read.
struct Raw {
    path: PathBuf,
    bytes: Vec<u8>,
    /// The file's full length (it may be longer than `bytes`).
    size: u64,
}

impl Raw {
    fn fingerprint(&self) -> (PathBuf, u64) {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (self.size, &self.bytes).hash(&mut hasher);
        (self.path.clone(), hasher.finish())
    }
}

/// An instruction file as the model sees it: its text, cut to the bounds, with markers that
/// say what was left out or could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub path: PathBuf,
    pub text: String,
}

/// A session's instructions.
pub struct Instructions {
    /// As read when the session came up (or at its last compaction), user file first, then
    /// outermost to innermost: what its system prompt shows.
    files: Mutex<Vec<Shown>>,
    /// The files the turns have seen since (path, fingerprint), to tell of a change once.
    seen: Mutex<Vec<(PathBuf, u64)>>,
}

impl Instructions {
    /// Reads the instructions of a session working in `cwd` (`user_dir`: where the user's own
    /// `AGENTS.md` lives, if anywhere).
    pub fn read(cwd: &Path, user_dir: Option<&Path>) -> Instructions {
        let raw = read_all(cwd, user_dir);
        Instructions {
            files: Mutex::new(bounded(&raw)),
            seen: Mutex::new(raw.iter().map(Raw::fingerprint).collect()),
        }
    }

    /// What the system prompt shows.
    pub fn files(&self) -> Vec<Shown> {
        self.files.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Reads the instructions again for the system prompt a compaction renders anew: the
/// conversation that told of changes is being summarised, so the prompt itself must now
/// show the files as they are.
pub fn reread(session: &Session) {
    let cwd = PathBuf::from(&session.state().cwd);
    let fresh = Instructions::read(&cwd, session.ctx().resolved().user_config_dir.as_deref());
    let Instructions { files, seen } = fresh;
    let instructions = session.instructions();
    *instructions.files.lock().unwrap_or_else(|p| p.into_inner()) =
        files.into_inner().unwrap_or_else(|p| p.into_inner());
    *instructions.seen.lock().unwrap_or_else(|p| p.into_inner()) =
        seen.into_inner().unwrap_or_else(|p| p.into_inner());
}

/// Reads the instructions again; if any file changed, appeared or disappeared since the last
/// look, returns a user message with the new text of each (bounded like the system prompt's)
/// and remembers what it saw.
pub fn instructions_changed(session: &Session) -> Option<Message> {
    let cwd = PathBuf::from(&session.state().cwd);
    let raw = read_all(&cwd, session.ctx().resolved().user_config_dir.as_deref());
    let now: Vec<(PathBuf, u64)> = raw.iter().map(Raw::fingerprint).collect();
    let before = {
        let mut seen = session
            .instructions()
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if *seen == now {
            return None;
        }
        std::mem::replace(&mut *seen, now.clone())
    };
    let changed: Vec<Raw> = raw
        .into_iter()
        .zip(&now)
        .filter(|(_, print)| !before.contains(print))
        .map(|(raw, _)| raw)
        .collect();
    let removed: Vec<&PathBuf> = before
        .iter()
        .map(|(path, _)| path)
        .filter(|path| !now.iter().any(|(p, _)| p == *path))
        .collect();
    let mut text = String::from(
        "The project instructions changed since this session began. This replaces what the \
         system prompt shows for these files; the other files still apply, and the innermost \
         file still wins.",
    );
    for file in bounded(&changed) {
        text.push_str(&format!("\n\n{}", tagged(&file)));
    }
    for path in removed {
        text.push_str(&format!(
            "\n\n<instructions path=\"{}\">(this file was removed: its instructions no longer apply)</instructions>",
            path.display()
        ));
    }
    Some(Message::user_text(text))
}

/// A file in the form the model reads it, its path in the tag.
pub fn tagged(file: &Shown) -> String {
    format!(
        "<instructions path=\"{}\">\n{}\n</instructions>",
        file.path.display(),
        file.text.trim_end()
    )
}

/// The user's file, then the chosen file of each directory from the outermost (the
/// repository root, or the cwd itself outside a repository) to the cwd.
fn read_all(cwd: &Path, user_dir: Option<&Path>) -> Vec<Raw> {
    let top = git::find(cwd).map_or_else(|| cwd.to_path_buf(), |repo| repo.root);
    let mut dirs: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(&top))
        .collect();
    dirs.reverse();
    let user = user_dir.and_then(|dir| read_file(&dir.join(NAMES[0])));
    user.into_iter()
        .chain(
            dirs.into_iter()
                .filter_map(|dir| NAMES.iter().find_map(|name| read_file(&dir.join(name)))),
        )
        .collect()
}

/// `None` when there is no such file; an unreadable one is skipped with a warning.
fn read_file(path: &Path) -> Option<Raw> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read an instructions file; skipped");
            return None;
        }
    };
    // A directory of that name is no instructions file.
    let size = match file.metadata() {
        Ok(meta) if meta.is_file() => meta.len(),
        _ => return None,
    };
    let mut bytes = Vec::new();
    if let Err(e) = (&mut file).take(READ_LIMIT).read_to_end(&mut bytes) {
        tracing::warn!(path = %path.display(), error = %e, "cannot read an instructions file; skipped");
        return None;
    }
    Some(Raw {
        path: path.to_path_buf(),
        size: size.max(bytes.len() as u64),
        bytes,
    })
}

/// The files within the bounds. The total is spent from the innermost file outward, so the
/// most specific instructions — the ones that win — are the last to be cut.
fn bounded(files: &[Raw]) -> Vec<Shown> {
    let mut left = TOTAL_LIMIT;
    let mut shown: Vec<Shown> = files
        .iter()
        .rev()
        .map(|raw| {
            let (text, used) = shown_text(raw, FILE_LIMIT.min(left));
            left -= used;
            Shown {
                path: raw.path.clone(),
                text,
            }
        })
        .collect();
    shown.reverse();
    shown
}

/// At most `limit` bytes of the file, cut at a char boundary, decoded lossily, with a marker
/// for each liberty taken; and how many bytes of the file it shows.
fn shown_text(raw: &Raw, limit: usize) -> (String, usize) {
    let mut cut = raw.bytes.len().min(limit);
    if cut < raw.bytes.len() {
        // Back off the continuation bytes of a char the cut would split (three at most).
        let mut backed = 0;
        while cut > 0 && backed < 3 && raw.bytes[cut] & 0xC0 == 0x80 {
            cut -= 1;
            backed += 1;
        }
    }
    let decoded = String::from_utf8_lossy(&raw.bytes[..cut]);
    let lossy = matches!(decoded, std::borrow::Cow::Owned(_));
    let mut text = decoded.into_owned();
    let path = raw.path.display();
    if lossy {
        text.push_str(&format!(
            "\n[Hearth: {path} is not valid UTF-8; the bytes that are not are shown as U+FFFD.]"
        ));
    }
    let left_out = raw.size - cut as u64;
    if left_out > 0 {
        text.push_str(&format!(
            "\n[Hearth: cut here; {left_out} more bytes of {path} are not shown. Read the file for the rest.]"
        ));
    }
    (text, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(path: &str, bytes: &[u8]) -> Raw {
        Raw {
            path: PathBuf::from(path),
            bytes: bytes.to_vec(),
            size: bytes.len() as u64,
        }
    }

    #[test]
    fn a_cut_never_splits_a_char() {
        // "é" is two bytes: a limit of 2 would split the second one.
        let (text, used) = shown_text(&raw("/p/AGENTS.md", "aéé".as_bytes()), 2);
        assert_eq!(used, 1);
        assert_eq!(
            text,
            "a\n[Hearth: cut here; 4 more bytes of /p/AGENTS.md are not shown. Read the file for the rest.]"
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_and_said() {
        let (text, used) = shown_text(&raw("/p/AGENTS.md", b"ok \xff\xfe end"), FILE_LIMIT);
        assert_eq!(used, 9);
        assert_eq!(
            text,
            "ok \u{FFFD}\u{FFFD} end\n[Hearth: /p/AGENTS.md is not valid UTF-8; the bytes that are not are shown as U+FFFD.]"
        );
    }

    #[test]
    fn the_total_is_spent_innermost_first() {
        let big = vec![b'x'; FILE_LIMIT + 10];
        let files = [
            raw("/user/AGENTS.md", &big),
            raw("/repo/AGENTS.md", &big),
            raw("/repo/sub/AGENTS.md", &big),
        ];
        let shown = bounded(&files);
        let kept = |s: &Shown| s.text.bytes().take_while(|b| *b == b'x').count();
        // The two inner files take the whole total; the user's gets only its marker.
        assert_eq!(
            shown.iter().map(kept).collect::<Vec<_>>(),
            [0, FILE_LIMIT, FILE_LIMIT]
        );
        assert!(shown[0].text.contains(&format!(
            "{} more bytes of /user/AGENTS.md are not shown",
            FILE_LIMIT + 10
        )));
        assert!(
            shown[2]
                .text
                .contains("10 more bytes of /repo/sub/AGENTS.md")
        );
    }

    #[test]
    fn agents_md_wins_over_claude_md_then_gemini_md() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        let a = root.join("a");
        let b = a.join("b");
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(root.join("GEMINI.md"), "gemini").unwrap();
        std::fs::write(a.join("CLAUDE.md"), "claude").unwrap();
        std::fs::write(a.join("GEMINI.md"), "not this").unwrap();
        std::fs::write(b.join("AGENTS.md"), "agents").unwrap();
        std::fs::write(b.join("CLAUDE.md"), "not this either").unwrap();
        let files = Instructions::read(&b, None).files();
        assert_eq!(
            files,
            [
                Shown {
                    path: root.join("GEMINI.md"),
                    text: "gemini".into()
                },
                Shown {
                    path: a.join("CLAUDE.md"),
                    text: "claude".into()
                },
                Shown {
                    path: b.join("AGENTS.md"),
                    text: "agents".into()
                },
            ]
        );
    }
}
