//! Commands: a prompt of one text block that starts with `/name` runs a command rather than
//! going to the model as it is. The built-ins (`builtin.rs`), the session's custom command
//! files (read by `session/project/custom_commands.rs`), its skills
//! (`session/project/skills.rs`) and its MCP servers' prompts (`mcp.rs`) make the list the
//! client is told (`list.rs`).
//!
//! Every command's prompt is replayed as the user typed it but marked (`_meta.hearth.command`),
//! so the model never reads it (`SessionEvent::UserChunk { for_model: false }`). An unknown
//! `/word` is no command: it may be a path or prose, and a command that takes no input followed
//! by text (`/help me`) is prose too. Three kinds:
//!
//! - **Answered by the engine** (`/help`, `/mcp [reconnect [server]]`, `/model`, `/mode`,
//!   `/sandbox` (`sandbox.rs`: what confines the session's commands), `/context`
//!   (`context.rs`: where the model's context goes)): agent
//!   message chunks, logged, then `end_turn`; no model request and no credential needed.
//!   `/model` and `/mode` go through `Session::apply_settings`, the path of
//!   `session/set_config_option`; `/mcp reconnect` restarts servers on their board
//!   (`McpServers::reconnect`, with the specs the session was given) and answers once they are
//!   up or failed.
//! - **For the model** (`/init`, custom commands, skills, MCP prompts): the command's text
//!   (`init.md`, the file's body with `$ARGUMENTS`, the skill as the `skill` tool loads it with
//!   what the user typed after it, the prompt's messages from `prompts/get`) is remembered
//!   model-only right after the marked prompt, so the model reads it as the user's message and
//!   `History::observe` puts it at the same place after a restart; then the turn goes on as any.
//! - **On the context**: `/compact [focus]` (`agent/compaction.rs`), `/undo` (`agent/undo.rs`).
//!
//! Tests: end to end in `core/tests/commands.rs`.

mod builtin;
mod context;
mod list;
mod mcp;
mod sandbox;

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

pub use self::list::{announce, available, refresh};
use super::{StopReason, TurnError, check_credential, compaction};
use crate::chat::Prompt;
use crate::session::Session;
use crate::session::events::{CompactionTrigger, EventSink, SessionEvent, Visibility};
use crate::session::project::custom_commands;
use crate::session::project::skills::skills_changed;
use crate::tools::SkillEntry;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    /// Compact the context now, the summary focused on what follows the command, if anything.
    Compact {
        focus: Option<String>,
    },
    Undo,
    /// `/mcp` and what follows it (`reconnect [server]`).
    Mcp {
        arguments: String,
    },
    Model {
        id: Option<String>,
    },
    Mode {
        id: Option<String>,
    },
    Sandbox,
    Context,
    Init,
    /// A custom command, expanded with its arguments.
    Custom {
        expansion: String,
    },
    /// A skill, and what the user typed after it.
    Skill {
        skill: crate::tools::SkillEntry,
        arguments: String,
    },
    /// An MCP prompt and what the user typed after it.
    McpPrompt {
        prompt: crate::mcp::McpPrompt,
        arguments: String,
    },
}

/// What a command left the turn to do.
pub enum Ran {
    /// It is done; the turn ends so.
    Answered(Result<StopReason, TurnError>),
    /// The model takes this text as the user's message, and the turn goes on.
    ForModel(String),
}

/// The command `prompt` runs, if it is one: a single text block `/name`, then (for commands
/// that take input) whitespace and the input. A command that takes no input followed by
/// text is prose, not the command.
pub async fn parse(session: &Session, prompt: &Prompt) -> Option<Command> {
    let [block] = &prompt.blocks[..] else {
        return None;
    };
    let text = block.text.as_deref()?.trim();
    let line = text.strip_prefix('/')?;
    let (name, rest) = line
        .split_once(char::is_whitespace)
        .map_or((line, ""), |(name, rest)| (name, rest.trim()));
    let input = || Some(rest.to_string()).filter(|r| !r.is_empty());
    let bare = rest.is_empty();
    let command = match name {
        "help" if bare => Command::Help,
        "compact" => Command::Compact { focus: input() },
        "undo" if bare => Command::Undo,
        "mcp" => Command::Mcp {
            arguments: rest.to_string(),
        },
        "model" => Command::Model { id: input() },
        "mode" => Command::Mode { id: input() },
        "sandbox" if bare => Command::Sandbox,
        "context" if bare => Command::Context,
        "init" if bare => Command::Init,
        "help" | "undo" | "sandbox" | "context" | "init" => return None,
        name if name.starts_with("mcp:") => {
            // A session's first prompt may come while its servers still connect.
            session.services().mcp_ready().await;
            let prompts = session.services().mcp()?.prompts();
            let prompt = prompts
                .into_iter()
                .find(|p| mcp::prompt_command(p) == name)?;
            Command::McpPrompt {
                prompt,
                arguments: rest.to_string(),
            }
        }
        name => {
            let commands = session.commands();
            match commands.custom.iter().find(|c| c.name == name) {
                Some(custom) => Command::Custom {
                    expansion: custom.expand(rest),
                },
                None => Command::Skill {
                    skill: session.skills().shelf().find(name)?,
                    arguments: rest.to_string(),
                },
            }
        }
    };
    Some(command)
}

/// Runs `command`, whose prompt the turn has logged.
pub async fn run(
    session: &Arc<Session>,
    sink: &dyn EventSink,
    token: &CancellationToken,
    command: Command,
) -> Ran {
    let answer = match command {
        Command::Help => {
            reread_custom(session, sink);
            builtin::help(&available(session))
        }
        Command::Mcp { arguments } => mcp::run(session, token, &arguments).await,
        Command::Model { id } => builtin::model(session, id.as_deref()),
        Command::Mode { id } => builtin::mode(session, id.as_deref()),
        Command::Sandbox => sandbox::status(session),
        Command::Context => {
            // The tools and the system prompt are the servers' too.
            session.services().mcp_ready().await;
            context::report(session).await
        }
        Command::Compact { focus } => {
            return Ran::Answered(compact(session, sink, token, focus).await);
        }
        Command::Undo => return Ran::Answered(super::undo::run(session, sink).await),
        Command::Init => return Ran::ForModel(builtin::INIT_PROMPT.to_string()),
        Command::Custom { expansion } => return Ran::ForModel(expansion),
        Command::Skill { skill, arguments } => match skill_prompt(session, &skill, &arguments) {
            Ok(text) => return Ran::ForModel(text),
            Err(why) => why,
        },
        Command::McpPrompt { prompt, arguments } => {
            match mcp_prompt(session, &prompt, &arguments).await {
                Ok(text) => return Ran::ForModel(text),
                Err(why) => why,
            }
        }
    };
    say(sink, answer);
    Ran::Answered(Ok(StopReason::EndTurn))
}

/// `/compact [focus]`, once the servers are up: the summary request offers the session's
/// tools, as every request does, so that the provider's cache serves its prefix. A session
/// with no conversation yet is told so, with no request: a summary of nothing would be made
/// up, and kept as the conversation's past.
async fn compact(
    session: &Session,
    sink: &dyn EventSink,
    token: &CancellationToken,
    focus: Option<String>,
) -> Result<StopReason, TurnError> {
    session.recall().await?;
    if session.history().messages().is_empty() {
        let text = "Nothing to compact yet: the conversation is empty.".to_string();
        let message = SessionEvent::MessageChunk {
            message_id: crate::ids::new_id("msg"),
            text,
        };
        sink.emit(message, Visibility::Live);
        return Ok(StopReason::EndTurn);
    }
    let model = session.state().settings.model.clone();
    let provider = check_credential(session.ctx(), &model)?;
    session.services().mcp_ready().await;
    let trigger = CompactionTrigger::Manual;
    compaction::compact(session, sink, token, &*provider, trigger, focus.as_deref())
        .await
        .stop()
}

/// The text of an MCP prompt got with what the user typed as its arguments.
async fn mcp_prompt(
    session: &Session,
    prompt: &crate::mcp::McpPrompt,
    typed: &str,
) -> Result<String, String> {
    let command = mcp::prompt_command(prompt);
    let arguments = mcp::prompt_arguments(prompt, typed)?;
    let servers = session
        .services()
        .mcp()
        .ok_or_else(|| format!("`/{command}` is gone: the session has no MCP servers now"))?;
    servers
        .get_prompt(&prompt.server, &prompt.name, arguments)
        .await
        .map_err(|why| format!("`/{command}` failed: {why}"))
}

/// What the model reads when the user runs a skill: the skill loaded as the `skill` tool
/// loads it, then what the user typed after the command.
fn skill_prompt(session: &Session, skill: &SkillEntry, typed: &str) -> Result<String, String> {
    let max = session.ctx().tool_limits().read_max_bytes;
    let loaded = crate::tools::skill::load(skill, max)
        .map_err(|why| format!("`/{}` failed: {why}", skill.name))?;
    let mut text = format!("The user runs the skill `{}`:\n\n{loaded}", skill.name);
    if !typed.is_empty() {
        text.push_str(&format!(
            "\n\nWhat the user typed after the command: {typed}"
        ));
    }
    Ok(text)
}

/// Reads the custom command files and the skills again, and tells the client if the list
/// changed (and the model, if the skills did).
fn reread_custom(session: &Session, sink: &dyn EventSink) {
    let cwd = session.state().cwd.clone();
    let user_dir = &session.ctx().resolved().user_config_dir;
    let custom = custom_commands::read(Path::new(&cwd), user_dir.as_deref());
    session.commands().custom = custom;
    if let Some(message) = skills_changed(session) {
        sink.remember(message);
    }
    refresh(session, sink);
}

/// A command's answer, as one agent message (logged: the replay shows it after the command).
fn say(sink: &dyn EventSink, text: String) {
    let message_id = crate::ids::new_id("msg");
    sink.emit(
        SessionEvent::MessageChunk { message_id, text },
        Visibility::Live,
    );
}
