//! The system prompt: who Hearth is and how it works (`system_prompt.md`, which reads as
//! documentation), then the session's environment, its project instructions, the MCP
//! servers that failed and what the client asked to add.
//!
//! It is a pure function of the session — no clock, no file read at render time — so that
//! it stays byte-identical for the life of a session and the provider's cached prefix
//! survives: the date is the session's creation date, the repository and the instructions
//! are what the session read when it came up.
//!
//! In order: the guide (edit it as prose); the environment — OS, shell, the session's creation
//! date from its row, the workspace roots, the git repository and branch
//! (`session/project/git.rs`: read from `.git/HEAD`, following a worktree's `gitdir:` file);
//! the project instructions (`session/project/instructions.rs`); the skills' names and
//! descriptions (`session/project/skills.rs`); the MCP servers that failed;
//! and the client's ACP `systemPrompt` (`append` only; validated in `acp/system_prompt.rs`,
//! stored in the session row's `client_system_prompt` column, kept by a `load`/`resume`
//! without one, replaced by one with it). The repository and instructions come from
//! `session::project::Project`, built in `session/actor.rs` `run` — new, load, resume and
//! restore alike. `agent/request.rs` renders it at the session's first request and keeps it
//! until its inputs change or a compaction.

use std::fmt::Write;

use crate::session::Session;
use crate::session::project::git::{Head, Repo};
use crate::session::project::instructions::{Shown, tagged};
use crate::session::project::skills::listing;
use crate::tools::SkillEntry;

const GUIDE: &str = include_str!("system_prompt.md");

/// What opens the Skills section, present only when the session has skills (the `skill`
/// tool is offered only then too).
const SKILLS: &str = "\n\n# Skills\n\nSkills hold instructions for particular kinds of task, \
    from the user and the project. When a task matches a skill's description, load the skill \
    with `skill` before you start and follow it; do not load one that does not apply. If a \
    later message lists the skills anew, that list replaces this one.";

pub fn system_prompt(session: &Session) -> String {
    let state = session.state();
    let instructions = session.instructions().files();
    render(&Inputs {
        cwd: &state.cwd,
        additional_dirs: &state.additional_dirs,
        created_at: &state.created_at,
        repo: session.repo(),
        instructions: &instructions,
        skills: session.skills().listed(),
        unavailable: &session.services().unavailable(),
        client: state.client_system_prompt.as_deref(),
    })
}

/// What a subagent is told after the session's own prompt, before its agent's.
const SUBAGENT: &str = "# You are a subagent\n\nAnother agent delegated one task to you \
    with the `task` tool. Do that task, then end your turn with your answer as your final \
    message: it is all the delegating agent sees of your work (not your tool calls, not your \
    earlier messages), so make it complete and self-contained, with file paths and line \
    numbers where they help. You cannot ask the user anything: when something is unclear, \
    choose the reasonable reading and say which one you chose.";

/// A subagent's system prompt: its parent's (the same environment and project instructions),
/// then what a subagent is, then its agent's own text.
pub fn for_child(parent: &Session, agent_prompt: &str) -> String {
    let mut text = system_prompt(parent);
    text.push('\n');
    text.push_str(SUBAGENT);
    if !agent_prompt.trim().is_empty() {
        text.push_str("\n\n");
        text.push_str(agent_prompt.trim_end());
    }
    text.push('\n');
    text
}

/// Everything the prompt is made of.
struct Inputs<'a> {
    cwd: &'a str,
    additional_dirs: &'a [String],
    /// RFC 3339; only its date is shown.
    created_at: &'a str,
    repo: Option<&'a Repo>,
    instructions: &'a [Shown],
    /// The skills the session came up with.
    skills: &'a [SkillEntry],
    /// The MCP servers that failed, with why — so the model knows their tools are missing
    /// rather than inventing them.
    unavailable: &'a [(String, String)],
    client: Option<&'a str>,
}

fn render(inputs: &Inputs<'_>) -> String {
    let mut text = GUIDE.trim_end().to_string();
    environment(&mut text, inputs);
    if !inputs.instructions.is_empty() {
        text.push_str(
            "\n\n# Project instructions\n\nThese files hold instructions from the user and the \
             project: the user's own first, then the workspace's from the outermost directory to \
             the innermost. Follow them. Where they disagree, the later, more specific one wins. \
             If a later message brings a file's new text, that replaces the text shown here.",
        );
        for file in inputs.instructions {
            text.push_str("\n\n");
            text.push_str(&tagged(file));
        }
    }
    if !inputs.skills.is_empty() {
        text.push_str(SKILLS);
        text.push_str(&listing(inputs.skills));
    }
    if !inputs.unavailable.is_empty() {
        text.push_str(
            "\n\n# Unavailable MCP servers\n\nThese MCP servers failed, so their tools are missing:",
        );
        for (server, reason) in inputs.unavailable {
            let _ = write!(text, "\n- {server}: {reason}");
        }
    }
    if let Some(client) = inputs.client {
        text.push_str("\n\n# Instructions from the editor\n\n");
        text.push_str(client.trim_end());
    }
    text.push('\n');
    text
}

fn environment(text: &mut String, inputs: &Inputs<'_>) {
    let date = inputs.created_at.get(..10).unwrap_or(inputs.created_at);
    let _ = write!(
        text,
        "\n\n# Environment\n\n\
         - Operating system: {} ({})\n\
         - Shell: `sh` (`run_command` runs `sh -c`)\n\
         - The session started on {date} (UTC).\n\
         - Workspace root and working directory: {}",
        std::env::consts::OS,
        std::env::consts::ARCH,
        inputs.cwd,
    );
    if !inputs.additional_dirs.is_empty() {
        let _ = write!(
            text,
            "\n- Additional workspace directories: {}",
            inputs.additional_dirs.join(", ")
        );
    }
    let git = match inputs.repo {
        None => "the working directory is not in a git repository".to_string(),
        Some(repo) => {
            let root = repo.root.display();
            match &repo.head {
                Head::Branch(branch) => format!("a repository at {root}, on branch `{branch}`"),
                Head::Detached(commit) => {
                    format!("a repository at {root}, HEAD detached at {commit}")
                }
                Head::Unknown => format!("a repository at {root} (its HEAD could not be read)"),
            }
        }
    };
    let _ = write!(
        text,
        "\n- Git: {git}, as of the session's start; run `git status` for the current state."
    );
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn inputs<'a>(repo: Option<&'a Repo>, instructions: &'a [Shown]) -> Inputs<'a> {
        Inputs {
            cwd: "/work/app",
            additional_dirs: &[],
            created_at: "2026-03-04T05:06:07.890Z",
            repo,
            instructions,
            skills: &[],
            unavailable: &[],
            client: None,
        }
    }

    #[test]
    fn the_environment_of_a_session_in_a_repository() {
        let repo = Repo {
            root: PathBuf::from("/work"),
            head: Head::Branch("main".into()),
        };
        let dirs = ["/lib/shared".to_string()];
        let text = render(&Inputs {
            additional_dirs: &dirs,
            ..inputs(Some(&repo), &[])
        });
        assert!(
            text.starts_with("You are Hearth, a coding agent working inside the user's editor.")
        );
        let environment = text.split_once("# Environment\n\n").unwrap().1;
        assert_eq!(
            environment,
            format!(
                "- Operating system: {} ({})\n\
                 - Shell: `sh` (`run_command` runs `sh -c`)\n\
                 - The session started on 2026-03-04 (UTC).\n\
                 - Workspace root and working directory: /work/app\n\
                 - Additional workspace directories: /lib/shared\n\
                 - Git: a repository at /work, on branch `main`, as of the session's start; run `git status` for the current state.\n",
                std::env::consts::OS,
                std::env::consts::ARCH
            )
        );
    }

    #[test]
    fn instructions_skills_failed_servers_then_the_editors_text() {
        let files = [Shown {
            path: PathBuf::from("/work/AGENTS.md"),
            text: "Use tabs.\n".into(),
        }];
        let skills = [SkillEntry {
            name: "pdf".into(),
            description: "Fill PDF forms".into(),
            file: PathBuf::from("/work/.hearth/skills/pdf/SKILL.md"),
            hint: None,
        }];
        let unavailable = [("db".to_string(), "exited with status 1".to_string())];
        let text = render(&Inputs {
            skills: &skills,
            unavailable: &unavailable,
            client: Some("Answer in French.\n\nBe brief."),
            ..inputs(None, &files)
        });
        assert!(text.contains("- Git: the working directory is not in a git repository,"));
        let tail = text.split_once("# Project instructions\n\n").unwrap().1;
        let tail = tail.split_once("\n\n").unwrap().1;
        assert_eq!(
            tail,
            "<instructions path=\"/work/AGENTS.md\">\nUse tabs.\n</instructions>\n\n\
             # Skills\n\nSkills hold instructions for particular kinds of task, from the user and \
             the project. When a task matches a skill's description, load the skill with `skill` \
             before you start and follow it; do not load one that does not apply. If a later \
             message lists the skills anew, that list replaces this one.\n\
             - `pdf`: Fill PDF forms\n\n\
             # Unavailable MCP servers\n\nThese MCP servers failed, so their tools are missing:\n\
             - db: exited with status 1\n\n\
             # Instructions from the editor\n\nAnswer in French.\n\nBe brief.\n"
        );
    }

    #[test]
    fn every_builtin_tool_is_explained() {
        let deps = crate::tools::ToolDeps::create(
            &crate::config::Config::default(),
            crate::io::testing::launcher(),
            Default::default(),
        );
        let tools =
            crate::tools::Registry::for_session(&deps, Some(crate::tools::builtin_agents()));
        for spec in tools.specs() {
            let name = &spec.name;
            assert!(
                GUIDE.contains(&format!("`{name}`")) || SKILLS.contains(&format!("`{name}`")),
                "{name} is not in the guide"
            );
        }
    }
}
