//! The agent types the `task` tool offers: the built-ins `general` and `explore`, then the
//! agent files — Markdown in the user's `<configDir>/agents/` and the workspace's
//! `.hearth/agents/`, one agent a file, front matter as Claude Code and opencode write it:
//!
//! ```text
//! ---
//! name: reviewer            # default: the file's stem
//! description: Reviews a diff for bugs
//! tools: read, grep, glob    # default: all of the parent's
//! model: gpt-test            # default: the parent's
//! mode: plan                 # ask | accept_edits | plan (default: the parent's)
//! maxTurns: 10
//! ---
//! You review code. Report each bug with its file and line.
//! ```
//!
//! The body is the child's system prompt, after the engine's. A file can only narrow: its
//! tools are intersected with the parent's and its mode is tightened to the parent's when
//! that is stricter (`agent/child.rs`), so an agent file never grants what the session lacks.
//! The workspace's file wins over the user's of the same name, and either over a built-in.
//! Read when the session comes up, like the custom commands.

use std::collections::BTreeMap;
use std::path::Path;

use crate::front_matter::{Document, project_files};
use crate::permissions::Mode;
use crate::tools::{AgentType, builtin_agents};

/// A file larger than this is no prompt anyone wrote by hand; it is skipped.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The agent types of a session working in `cwd`, built-ins first.
pub fn read(cwd: &Path, user_config_dir: Option<&Path>) -> Vec<AgentType> {
    let mut found: BTreeMap<String, AgentType> = BTreeMap::new();
    for (stem, text) in project_files(
        cwd,
        user_config_dir,
        "agents",
        (MAX_FILE_BYTES, "agent file"),
    ) {
        let agent = parse(stem, &text);
        found.insert(agent.name.clone(), agent);
    }
    let mut agents: Vec<AgentType> = builtin_agents()
        .into_iter()
        .filter(|builtin| !found.contains_key(&builtin.name))
        .collect();
    agents.extend(found.into_values());
    agents
}

/// An agent file. A mode it names that Hearth does not know, or `bypass` (a file cannot
/// loosen anything), leaves the parent's.
fn parse(stem: String, text: &str) -> AgentType {
    let doc = Document::parse(text);
    let mode = doc
        .get("mode")
        .or_else(|| doc.get("permissionMode"))
        .and_then(mode_of);
    AgentType {
        name: doc.get("name").map_or(stem, str::to_string),
        description: doc
            .get("description")
            .map(str::to_string)
            .or_else(|| doc.first_line())
            .unwrap_or_else(|| "A custom agent".to_string()),
        tools: doc.list("tools"),
        model: doc
            .get("model")
            .filter(|m| *m != "inherit")
            .map(str::to_string),
        mode,
        max_turns: doc
            .get("maxTurns")
            .or_else(|| doc.get("max_turns"))
            .and_then(|n| n.parse().ok()),
        prompt: doc.body,
    }
}

/// A mode by Hearth's id or Claude Code's `permissionMode` name.
fn mode_of(name: &str) -> Option<Mode> {
    match name {
        "acceptEdits" => Some(Mode::AcceptEdits),
        "default" => Some(Mode::Ask),
        other => Mode::parse(other).filter(|mode| *mode != Mode::Bypass),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_gives_its_fields_and_its_body_is_the_prompt() {
        let agent = parse(
            "rev".into(),
            "---\nname: reviewer\ndescription: Reviews diffs\ntools: [read, grep]\n\
             model: inherit\nmode: plan\nmaxTurns: 7\n---\nYou review.\n",
        );
        assert_eq!(
            agent,
            AgentType {
                name: "reviewer".into(),
                description: "Reviews diffs".into(),
                tools: Some(vec!["read".into(), "grep".into()]),
                model: None,
                mode: Some(Mode::Plan),
                max_turns: Some(7),
                prompt: "You review.".into(),
            }
        );
        let bare = parse("helper".into(), "# Helps out\nDo things.");
        assert_eq!(bare.name, "helper");
        assert_eq!(bare.description, "Helps out");
        assert_eq!(bare.tools, None);
        assert_eq!(parse("x".into(), "---\nmode: bypass\n---\nx").mode, None);
        let claude = parse("x".into(), "---\npermissionMode: acceptEdits\n---\nx");
        assert_eq!(claude.mode, Some(Mode::AcceptEdits));
    }

    #[test]
    fn the_workspace_wins_over_the_user_and_both_over_a_builtin() {
        let root = tempfile::tempdir().unwrap();
        let (cwd, user) = (root.path().join("w"), root.path().join("u"));
        let write = |dir: &Path, name: &str, text: &str| {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(name), text).unwrap();
        };
        write(
            &user.join("agents"),
            "a.md",
            "---\ndescription: user's\n---\nu",
        );
        write(
            &cwd.join(".hearth/agents"),
            "a.md",
            "---\ndescription: workspace's\n---\nw",
        );
        write(
            &cwd.join(".hearth/agents"),
            "explore.md",
            "---\ntools: read\n---\nmine",
        );
        let agents = read(&cwd, Some(&user));
        let names: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["general", "a", "explore"]);
        assert_eq!(agents[1].description, "workspace's");
        assert_eq!(agents[2].tools, Some(vec!["read".to_string()]));
    }
}
