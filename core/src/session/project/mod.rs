//! What a session reads of its project when it comes up: the git repository and branch
//! (`git.rs`), the project instructions (`instructions.rs`), the custom command files
//! (`custom_commands.rs`), the Agent Skills (`skills.rs`) and the agent files of the `task`
//! tool (`agents.rs`), the last four Markdown with a front matter (`crate::front_matter`). The
//! turn reads them from here (the system prompt, the command list), so a session's system
//! prompt stays byte-identical for its life; only the instructions, the command files and the
//! skills are read again, at the points their files say.

pub mod agents;
pub mod custom_commands;
pub mod git;
pub mod instructions;
pub mod skills;

use std::path::Path;
use std::sync::Mutex;

use self::custom_commands::CustomCommand;
use self::git::Repo;
use self::instructions::Instructions;
use self::skills::Skills;
use crate::config::Resolved;
use crate::session::events::AvailableCommand;
use crate::tools::AgentType;

/// What a session read of its workspace when it came up: for its system prompt, and its
/// custom commands (read again on `/help`, with the list last told to the client).
pub struct Project {
    pub repo: Option<Repo>,
    pub instructions: Instructions,
    pub commands: Mutex<Commands>,
    pub skills: Skills,
    /// The agent types the `task` tool offers (`agents.rs`).
    pub agents: Vec<AgentType>,
}

impl Project {
    /// Reads the repository, the instructions and the custom commands of a session working
    /// in `cwd`.
    pub fn read(cwd: &Path, resolved: &Resolved) -> Project {
        let user_dir = &resolved.user_config_dir;
        Project {
            repo: git::find(cwd),
            instructions: Instructions::read(cwd, user_dir.as_deref()),
            commands: Mutex::new(Commands::read(cwd, user_dir.as_deref())),
            skills: Skills::read(cwd, user_dir.as_deref()),
            agents: agents::read(cwd, user_dir.as_deref()),
        }
    }
}

/// What a session knows of its commands: the custom ones read when it came up (and on
/// `/help`), and the list it last told the client.
#[derive(Debug, Default)]
pub struct Commands {
    pub custom: Vec<CustomCommand>,
    pub announced: Option<Vec<AvailableCommand>>,
}

impl Commands {
    /// The custom commands of a session working in `cwd`; nothing told yet.
    pub fn read(cwd: &Path, user_config_dir: Option<&Path>) -> Commands {
        Commands {
            custom: custom_commands::read(cwd, user_config_dir),
            announced: None,
        }
    }
}
