//! `/sandbox`: what confines this session's commands — the backend this machine gives them,
//! the session's sandbox mode and network, what they may write, which servers run confined,
//! and what the permission mode makes of it. The status `initialize`'s `_meta.hearth.sandbox`
//! gives a client, in words for the user.

use crate::io::process::sandbox_backend;
use crate::sandbox::Mode;
use crate::session::Session;

/// The answer to `/sandbox`.
pub fn status(session: &Session) -> String {
    let setup = &session.ctx().resolved().sandbox;
    let settings = session.state().settings.clone();
    let mut lines = Vec::new();
    if settings.sandbox == Mode::Off {
        lines.push(
            "The sandbox is off for this session: commands run with your own rights.".to_owned(),
        );
    } else {
        let backend = sandbox_backend(&setup.settings)
            .unwrap_or_else(|| "none — nothing on this machine confines them".into());
        lines.push(format!(
            "Commands run `{}`, {} (backend: {backend}).",
            settings.sandbox.as_str(),
            setup.settings.network
        ));
        lines.push(writable(settings.sandbox, &setup.settings.writable_roots));
        lines.push(servers(
            setup.settings.confines_language_servers(),
            setup.settings.confines_mcp_servers(),
        ));
    }
    lines.push(format!(
        "Permission mode `{}`: {}",
        settings.mode.id(),
        settings.mode.description()
    ));
    lines.push(
        "Change it with the session's `sandbox` option; a command that needs more asks you \
         first (`widen` or `escalate`)."
            .into(),
    );
    lines.join("\n\n")
}

/// What a command may write under `mode`.
fn writable(mode: Mode, extra: &[std::path::PathBuf]) -> String {
    let extra: Vec<String> = extra.iter().map(|p| format!("`{}`", p.display())).collect();
    match mode {
        Mode::ReadOnly => "They may write only a private temp dir.".into(),
        _ if extra.is_empty() => {
            "They may write the session's directories and a private temp dir.".into()
        }
        _ => format!(
            "They may write the session's directories, {} and a private temp dir.",
            extra.join(", ")
        ),
    }
}

/// Which servers run confined.
fn servers(language_servers: bool, mcp_servers: bool) -> String {
    let lsp = if language_servers {
        "Language servers run in it too"
    } else {
        "Language servers run outside it"
    };
    let mcp = if mcp_servers {
        "every stdio MCP server does"
    } else {
        "stdio MCP servers only when their entry asks"
    };
    format!("{lsp}; {mcp}.")
}
