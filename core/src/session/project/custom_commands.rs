//! Custom commands: Markdown files in `<cwd>/.hearth/commands/` and the user's
//! `<configDir>/commands/`, one command a file (`review.md` is `/review`; the workspace's wins
//! over the user's of the same name). An optional front matter gives the list its description
//! and input hint:
//!
//! ```text
//! ---
//! description: Review the staged changes
//! argument-hint: [focus]
//! ---
//! Review the staged changes, focusing on $ARGUMENTS.
//! ```
//!
//! The files are read when the session comes up and again on `/help`, not on every prompt.

use std::collections::BTreeMap;
use std::path::Path;

use crate::front_matter::{Document, project_files};

/// A file larger than this is no prompt anyone wrote by hand; it is skipped.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// What the body's `$ARGUMENTS` stands for.
const ARGUMENTS: &str = "$ARGUMENTS";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    pub name: String,
    pub description: String,
    pub hint: Option<String>,
    body: String,
}

impl CustomCommand {
    /// The body with `$ARGUMENTS` replaced by `arguments`; a body without the placeholder
    /// gets them after it, so that what the user typed is never lost.
    pub fn expand(&self, arguments: &str) -> String {
        if self.body.contains(ARGUMENTS) {
            self.body.replace(ARGUMENTS, arguments)
        } else if arguments.is_empty() {
            self.body.clone()
        } else {
            format!("{}\n\n{arguments}", self.body.trim_end())
        }
    }
}

/// The commands of a session working in `cwd`, by name.
pub fn read(cwd: &Path, user_config_dir: Option<&Path>) -> Vec<CustomCommand> {
    let mut found = BTreeMap::new();
    // The workspace's come last, so they replace the user's of the same name.
    for (name, text) in project_files(
        cwd,
        user_config_dir,
        "commands",
        (MAX_FILE_BYTES, "custom command file"),
    ) {
        found.insert(name.clone(), parse(name, &text));
    }
    found.into_values().collect()
}

/// A command file: front matter (only `description` and `argument-hint` mean anything; other
/// keys are ignored, as is a front matter that never closes — then the whole file is body).
fn parse(name: String, text: &str) -> CustomCommand {
    let doc = Document::parse(text);
    let mut hint = doc.get("argument-hint").map(str::to_string);
    if hint.is_none() && doc.body.contains(ARGUMENTS) {
        hint = Some("arguments".to_string());
    }
    // Without a description, the body's first line says what the command is.
    let description = doc
        .get("description")
        .map(str::to_string)
        .or_else(|| doc.first_line())
        .unwrap_or_else(|| "Custom command".to_string());
    CustomCommand {
        name,
        description,
        hint,
        body: doc.body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_gives_the_description_and_the_hint() {
        let command = parse(
            "review".into(),
            "---\ndescription: Review the diff\nargument-hint: \"[focus]\"\nother: x\n---\nReview, focusing on $ARGUMENTS.\n",
        );
        assert_eq!(command.description, "Review the diff");
        assert_eq!(command.hint.as_deref(), Some("[focus]"));
        assert_eq!(command.expand("tests"), "Review, focusing on tests.");
    }

    #[test]
    fn without_front_matter_the_first_line_describes_it() {
        let command = parse("plan".into(), "# Plan the work\n\nWrite a plan.");
        assert_eq!(command.description, "Plan the work");
        assert_eq!(command.hint, None);
        assert_eq!(command.expand(""), "# Plan the work\n\nWrite a plan.");
        assert_eq!(
            command.expand("for the parser"),
            "# Plan the work\n\nWrite a plan.\n\nfor the parser"
        );
        let unclosed = parse("x".into(), "---\ndescription: never closed\n");
        assert_eq!(unclosed.expand(""), "---\ndescription: never closed");
    }

    #[test]
    fn the_workspace_wins_over_the_user() {
        let dir = tempfile::tempdir().unwrap();
        let (cwd, user) = (dir.path().join("w"), dir.path().join("u"));
        std::fs::create_dir_all(cwd.join(".hearth/commands")).unwrap();
        std::fs::create_dir_all(user.join("commands")).unwrap();
        std::fs::write(cwd.join(".hearth/commands/same.md"), "workspace").unwrap();
        std::fs::write(user.join("commands/same.md"), "user").unwrap();
        std::fs::write(user.join("commands/mine.md"), "mine").unwrap();
        std::fs::write(user.join("commands/notes.txt"), "not a command").unwrap();
        std::fs::write(user.join("commands/two words.md"), "untypable").unwrap();
        let commands = read(&cwd, Some(&user));
        let found: Vec<(&str, String)> = commands
            .iter()
            .map(|c| (c.name.as_str(), c.expand("")))
            .collect();
        assert_eq!(
            found,
            [
                ("mine", "mine".to_string()),
                ("same", "workspace".to_string())
            ]
        );
    }
}
