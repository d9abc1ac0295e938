//! Agent Skills: folders holding a `SKILL.md` — front matter with `name` and `description`,
//! then instructions — and any files beside it, the format Claude Code, codex, gemini-cli and
//! opencode all read. A session finds them in, from the lowest precedence to the highest,
//! `<configDir>/skills/`, the workspace's cross-agent `.agents/skills/` and its own
//! `.hearth/skills/`: one skill a subfolder, the later winning a name they share.
//!
//! Only names and descriptions are in the system prompt (the listing below, bounded); the
//! body is loaded when the model asks for it, with the `skill` tool (`tools/skill.rs`), or
//! when the user runs the skill as the slash command of its name (`agent/commands/`).
//!
//! Each skill is checked as the format says: a name of lowercase letters, digits and single
//! hyphens, at most 64 characters (the folder's name when the front matter has none), and a
//! description (cut at 1,024 characters). A skill without a description, with an untypable
//! name or a `SKILL.md` over 256 KiB is skipped with a warning; at most 100 are kept.
//!
//! The system prompt shows the skills the session came up with, so it stays byte-identical;
//! when a turn begins, [`skills_changed`] reads them again, and a changed set reaches the model
//! as a user message (remembered in the log), the `skill` tool and the commands follow it.
//!
//! Tests: end to end in `core/tests/skills.rs`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::chat::Message;
use crate::front_matter::{Document, read_bounded};
use crate::session::Session;
use crate::tools::{Shelf, SkillEntry};

/// The most skills a session keeps.
const MAX_SKILLS: usize = 100;
/// A description's most characters, as the format bounds it.
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// A name's most characters, as the format bounds it.
const MAX_NAME_CHARS: usize = 64;
/// The largest `SKILL.md` read.
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// The most the listing of names and descriptions takes of the system prompt; past it the
/// rest are named without their descriptions.
pub const LISTING_LIMIT: usize = 16 * 1024;

/// A session's skills: those it came up with (its system prompt lists them) and those it
/// has now.
#[derive(Debug, Default)]
pub struct Skills {
    listed: Vec<SkillEntry>,
    shelf: std::sync::Arc<Shelf>,
}

impl Skills {
    pub fn read(cwd: &Path, user_config_dir: Option<&Path>) -> Skills {
        let listed = read(cwd, user_config_dir);
        Skills {
            shelf: std::sync::Arc::new(Shelf::new(listed.clone())),
            listed,
        }
    }

    /// The skills the system prompt lists.
    pub fn listed(&self) -> &[SkillEntry] {
        &self.listed
    }

    /// The skills now, shared with the `skill` tool's calls.
    pub fn shelf(&self) -> std::sync::Arc<Shelf> {
        self.shelf.clone()
    }
}

/// The skills of a session working in `cwd`, sorted by name.
pub fn read(cwd: &Path, user_config_dir: Option<&Path>) -> Vec<SkillEntry> {
    let roots = [
        user_config_dir.map(|dir| dir.join("skills")),
        Some(cwd.join(".agents").join("skills")),
        Some(cwd.join(".hearth").join("skills")),
    ];
    let mut found = BTreeMap::new();
    for root in roots.into_iter().flatten() {
        for file in skill_files(&root) {
            if let Some(skill) = load(&file) {
                found.insert(skill.name.clone(), skill);
            }
        }
    }
    if found.len() > MAX_SKILLS {
        tracing::warn!(found = found.len(), kept = MAX_SKILLS, "too many skills");
    }
    found.into_values().take(MAX_SKILLS).collect()
}

/// The `SKILL.md` of each subfolder of `root`.
fn skill_files(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path().join("SKILL.md"))
        .filter(|file| file.is_file())
        .collect()
}

/// The skill `file` describes, or `None` (with a warning) when it is not a valid one.
fn load(file: &Path) -> Option<SkillEntry> {
    let text = read_bounded(file, MAX_FILE_BYTES, "skill file")?;
    let doc = Document::parse(&text);
    let folder = file.parent()?.file_name()?.to_string_lossy().into_owned();
    let name = doc.get("name").unwrap_or(&folder).to_string();
    let skip = |why: &str| {
        tracing::warn!(path = %file.display(), "skill skipped: {why}");
        None
    };
    if !valid_name(&name) {
        return skip("its name is not lowercase letters, digits and single hyphens");
    }
    let Some(description) = doc.get("description") else {
        return skip("it has no description");
    };
    let description = description.chars().take(MAX_DESCRIPTION_CHARS).collect();
    Some(SkillEntry {
        name,
        description,
        file: file.to_path_buf(),
        hint: doc.get("argument-hint").map(str::to_string),
    })
}

/// A name as the format allows it: `a-z`, `0-9` and hyphens, none leading, trailing or doubled.
fn valid_name(name: &str) -> bool {
    let chars_ok = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    chars_ok
        && (1..=MAX_NAME_CHARS).contains(&name.len())
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The skills as the model reads them: one line each, `- name: description`, within
/// [`LISTING_LIMIT`]; the skills past it by name only.
pub fn listing(skills: &[SkillEntry]) -> String {
    let mut text = String::new();
    let mut unlisted = Vec::new();
    for skill in skills {
        let line = format!("\n- `{}`: {}", skill.name, skill.description);
        if unlisted.is_empty() && text.len() + line.len() <= LISTING_LIMIT {
            text.push_str(&line);
        } else {
            unlisted.push(format!("`{}`", skill.name));
        }
    }
    if !unlisted.is_empty() {
        let _ = write!(
            text,
            "\n- Also (their descriptions did not fit): {}",
            unlisted.join(", ")
        );
    }
    text
}

/// Reads the session's skills again; when they changed since it last looked, the shelf takes
/// the new set and the model is told in a user message. The caller tells the client the
/// commands that follow.
pub fn skills_changed(session: &Session) -> Option<Message> {
    let cwd = PathBuf::from(&session.state().cwd);
    let now = read(&cwd, session.ctx().resolved().user_config_dir.as_deref());
    let shelf = session.skills().shelf();
    if *shelf.get() == *now {
        return None;
    }
    let text = if now.is_empty() {
        "The skills changed since this session began: none is available now.".to_string()
    } else {
        format!(
            "The skills changed since this session began. These are available now, in place \
             of the ones the system prompt lists:{}",
            listing(&now)
        )
    };
    shelf.set(now);
    Some(Message::user_text(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, folder: &str, text: &str) {
        std::fs::create_dir_all(root.join(folder)).unwrap();
        std::fs::write(root.join(folder).join("SKILL.md"), text).unwrap();
    }

    #[test]
    fn finds_valid_skills_the_workspace_winning() {
        let dir = tempfile::tempdir().unwrap();
        let (cwd, user) = (dir.path().join("w"), dir.path().join("u"));
        let hearth = cwd.join(".hearth/skills");
        let agents = cwd.join(".agents/skills");
        write(
            &user.join("skills"),
            "pdf",
            "---\ndescription: user's pdf\n---\n",
        );
        write(
            &agents,
            "pdf",
            "---\nname: pdf\ndescription: shared pdf\n---\n",
        );
        write(
            &hearth,
            "pdf",
            "---\nname: pdf\ndescription: hearth's pdf\n---\n",
        );
        write(&agents, "csv", "---\ndescription: Tables\n---\nbody");
        write(&agents, "Bad_Name", "---\ndescription: untypable\n---\n");
        write(&agents, "quiet", "---\nname: quiet\n---\nno description");
        write(
            &agents,
            "long",
            &format!("---\ndescription: {}\n---\n", "d".repeat(2000)),
        );
        std::fs::write(agents.join("loose.md"), "not in a folder").unwrap();
        let found = read(&cwd, Some(&user));
        let names: Vec<(&str, usize)> = found
            .iter()
            .map(|s| (s.name.as_str(), s.description.len()))
            .collect();
        assert_eq!(names, [("csv", 6), ("long", 1024), ("pdf", 12)]);
        assert_eq!(found[2].description, "hearth's pdf");
        assert_eq!(found[2].file, hearth.join("pdf/SKILL.md"));
    }

    #[test]
    fn names_follow_the_format() {
        for good in ["pdf", "pdf-2", "a"] {
            assert!(valid_name(good), "{good}");
        }
        let long = "a".repeat(65);
        for bad in [
            "",
            "-pdf",
            "pdf-",
            "p--f",
            "PDF",
            "p f",
            "p_f",
            long.as_str(),
        ] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn the_listing_stays_within_its_bound() {
        let skill = |i: usize| SkillEntry {
            name: format!("s{i:03}"),
            description: "x".repeat(900),
            file: PathBuf::from("/s/SKILL.md"),
            hint: None,
        };
        let skills: Vec<SkillEntry> = (0..30).map(skill).collect();
        let text = listing(&skills);
        assert!(text.len() <= LISTING_LIMIT + 30 * 8, "{}", text.len());
        assert!(text.starts_with("\n- `s000`: xxx"));
        assert!(
            text.ends_with("\n- Also (their descriptions did not fit): `s017`, `s018`, `s019`, `s020`, `s021`, `s022`, `s023`, `s024`, `s025`, `s026`, `s027`, `s028`, `s029`"),
            "{text}"
        );
    }
}
