//! The built-in commands: their entries in the list, and the answers of those the engine
//! gives without the model (`/help`, `/model`, `/mode`).

use crate::permissions::Mode;
use crate::session::Session;
use crate::session::events::AvailableCommand;

/// A built-in command as the list shows it.
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    pub hint: Option<&'static str>,
}

pub const BUILTINS: [Builtin; 9] = [
    Builtin {
        name: "help",
        description: "List the commands",
        hint: None,
    },
    Builtin {
        name: "compact",
        description: "Summarize the conversation to free the model's context",
        hint: Some("[what the summary should focus on]"),
    },
    Builtin {
        name: "undo",
        description: "Undo the last turn's file changes",
        hint: None,
    },
    Builtin {
        name: "mcp",
        description: "Show the MCP servers' status, or reconnect them",
        hint: Some("[reconnect [server]]"),
    },
    Builtin {
        name: "model",
        description: "Switch the session's model",
        hint: Some("<model id>"),
    },
    Builtin {
        name: "mode",
        description: "Switch the permission mode",
        hint: Some("<mode id>"),
    },
    Builtin {
        name: "sandbox",
        description: "Show what confines this session's commands",
        hint: None,
    },
    Builtin {
        name: "context",
        description: "Show where the model's context goes, and what /compact would free",
        hint: None,
    },
    Builtin {
        name: "init",
        description: "Write an AGENTS.md with instructions for this project",
        hint: None,
    },
];

/// The prompt `/init` sends to the model.
pub const INIT_PROMPT: &str = include_str!("init.md");

/// `/help`: every command, one a line.
pub fn help(commands: &[AvailableCommand]) -> String {
    let lines: Vec<String> = commands
        .iter()
        .map(|command| match &command.hint {
            Some(hint) => format!("- `/{} {hint}`: {}", command.name, command.description),
            None => format!("- `/{}`: {}", command.name, command.description),
        })
        .collect();
    format!(
        "Commands:\n{}\n\nAnything else that starts with `/` goes to the model as it is.",
        lines.join("\n")
    )
}

/// `/model [id]`: switches to `id` through the path `session/set_config_option` takes, or
/// says which ids there are.
pub fn model(session: &Session, id: Option<&str>) -> String {
    let ctx = session.ctx();
    let ids: Vec<String> = ctx
        .catalog()
        .iter()
        .map(|m| format!("`{}`", m.id))
        .collect();
    let mut settings = session.state().settings.clone();
    match id {
        Some(id) if ctx.model(id).is_some() => {
            settings.model = id.to_string();
            session.apply_settings(settings);
            format!("Model set to `{id}`.")
        }
        Some(id) => format!("`{id}` is not a model here. Models: {}.", ids.join(", ")),
        None => format!(
            "The model is `{}`. Models: {}.",
            settings.model,
            ids.join(", ")
        ),
    }
}

/// `/mode [id]`: like `/model`, for the permission mode.
pub fn mode(session: &Session, id: Option<&str>) -> String {
    let ids: Vec<String> = Mode::ALL.iter().map(|m| format!("`{}`", m.id())).collect();
    let mut settings = session.state().settings.clone();
    match id.map(|id| (id, Mode::parse(id))) {
        Some((_, Some(mode))) => {
            settings.mode = mode;
            session.apply_settings(settings);
            format!("Mode set to `{}` ({}).", mode.id(), mode.name())
        }
        Some((id, None)) => format!("`{id}` is not a mode. Modes: {}.", ids.join(", ")),
        None => format!(
            "The mode is `{}`. Modes: {}.",
            settings.mode.id(),
            ids.join(", ")
        ),
    }
}
