//! The commands a session offers — the built-ins, its custom command files, its skills, its
//! MCP servers' prompts — and telling the client (`available_commands_update`). The list is state, not
//! history: it is sent (`Transient`), never logged, and a `session/load` sends the current
//! one after its replay rather than replaying old ones.
//!
//! Order: the built-ins, then the custom commands (the workspace's winning a clash), then the
//! skills (a built-in or a command file of the same name hides one), then each
//! connected server's prompts as `mcp:<server>:<prompt>` (listed at connect time when the
//! server has the prompts capability). [`announce`] sends it after the response of `new`,
//! `load` (after the replay) and `resume` — a handler that opens a session calls it after its
//! own response — and [`refresh`] again when it changes (`session/mcp.rs` watches the
//! servers; `/help` re-reads the files).

use super::builtin::BUILTINS;
use super::mcp::{prompt_command, prompt_hint};
use crate::session::Session;
use crate::session::events::{AvailableCommand, EventSink, SessionEvent, Visibility};

/// Every command a prompt can run now, in the order `/help` shows them.
pub fn available(session: &Session) -> Vec<AvailableCommand> {
    let mut commands: Vec<AvailableCommand> = BUILTINS
        .iter()
        .map(|builtin| AvailableCommand {
            name: builtin.name.to_string(),
            description: builtin.description.to_string(),
            hint: builtin.hint.map(str::to_string),
        })
        .collect();
    let custom = session.commands().custom.clone();
    commands.extend(
        custom
            .into_iter()
            // A built-in keeps its name: a file cannot change what `/help` does.
            .filter(|c| BUILTINS.iter().all(|b| b.name != c.name))
            .map(|c| AvailableCommand {
                name: c.name,
                description: c.description,
                hint: c.hint,
            }),
    );
    let skills = session.skills().shelf().get();
    let skills: Vec<AvailableCommand> = skills
        .iter()
        // A built-in or a command file of the same name wins: it is what the user wrote as
        // a command.
        .filter(|s| commands.iter().all(|c| c.name != s.name))
        .map(|s| AvailableCommand {
            name: s.name.clone(),
            description: format!("Skill: {}", s.description),
            hint: s.hint.clone(),
        })
        .collect();
    commands.extend(skills);
    if let Some(servers) = session.services().mcp() {
        commands.extend(servers.prompts().iter().map(|prompt| AvailableCommand {
            name: prompt_command(prompt),
            description: prompt.description.clone().unwrap_or_else(|| {
                format!(
                    "Prompt `{}` of the MCP server `{}`",
                    prompt.name, prompt.server
                )
            }),
            hint: prompt_hint(prompt),
        }));
    }
    commands
}

/// Sends the session's command list to the client. Call it after the response that names
/// the session (`session/new`, `load` after its replay, `resume`, `fork`): a client drops
/// updates for a session it does not know yet.
pub fn announce(session: &Session, sink: &dyn EventSink) {
    let commands = available(session);
    session.commands().announced = Some(commands.clone());
    sink.emit(
        SessionEvent::AvailableCommands(commands),
        Visibility::Transient,
    );
}

/// Sends the list again if it changed since it was last sent; nothing before the first
/// `announce` (the session's response may not be out yet).
pub fn refresh(session: &Session, sink: &dyn EventSink) {
    let commands = available(session);
    let changed = {
        let mut state = session.commands();
        match &state.announced {
            Some(announced) if *announced != commands => {
                state.announced = Some(commands.clone());
                true
            }
            _ => false,
        }
    };
    if changed {
        sink.emit(
            SessionEvent::AvailableCommands(commands),
            Visibility::Transient,
        );
    }
}
