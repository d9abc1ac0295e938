//! `/mcp` (each server's state; `/mcp reconnect [server]`) and the servers' prompts as
//! commands, `/mcp:<server>:<prompt> [arguments]`.

use tokio_util::sync::CancellationToken;

use crate::mcp::{McpPrompt, ServerState, ServerStatus};
use crate::session::Session;

/// The command name of an MCP prompt.
pub fn prompt_command(prompt: &McpPrompt) -> String {
    format!("mcp:{}:{}", prompt.server, prompt.name)
}

/// `<topic> [style]`: required arguments in angle brackets, optional ones in square ones.
pub fn prompt_hint(prompt: &McpPrompt) -> Option<String> {
    let words: Vec<String> = prompt
        .arguments
        .iter()
        .map(|(name, required)| match required {
            true => format!("<{name}>"),
            false => format!("[{name}]"),
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// What the user typed after the command, as the prompt's arguments: one argument takes it
/// all; with several, each takes a word in order and the last one the rest.
pub fn prompt_arguments(prompt: &McpPrompt, typed: &str) -> Result<Vec<(String, String)>, String> {
    let mut rest = typed.trim();
    let mut values = Vec::new();
    for (i, (name, required)) in prompt.arguments.iter().enumerate() {
        let last = i + 1 == prompt.arguments.len();
        let value = if last {
            std::mem::take(&mut rest)
        } else {
            let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            rest = after.trim_start();
            word
        };
        if value.is_empty() {
            if *required {
                return Err(format!(
                    "`/{}` needs its `{name}` argument: `/{} {}`",
                    prompt_command(prompt),
                    prompt_command(prompt),
                    prompt_hint(prompt).unwrap_or_default()
                ));
            }
            continue;
        }
        values.push((name.clone(), value.to_string()));
    }
    Ok(values)
}

/// Runs `/mcp` or `/mcp reconnect [server]`; the answer for the user.
pub async fn run(session: &Session, token: &CancellationToken, arguments: &str) -> String {
    let Some(servers) = session.services().mcp() else {
        return "This session has no MCP servers.".into();
    };
    let mut words = arguments.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (None, ..) => status(&servers.status()),
        (Some("reconnect"), name, None) => match servers.reconnect(name) {
            Err(why) => format!("Cannot reconnect: {why}."),
            Ok(names) => {
                // Answered once they are up or failed, so the answer says how it went.
                tokio::select! {
                    () = token.cancelled() => {}
                    () = servers.ready() => {}
                }
                let status = servers.status();
                let shown: Vec<ServerStatus> = status
                    .into_iter()
                    .filter(|s| names.contains(&s.name))
                    .collect();
                format!("Reconnected.\n\n{}", self::status(&shown))
            }
        },
        _ => "Usage: `/mcp` shows the servers; `/mcp reconnect [server]` reconnects one server, \
              or all of them."
            .into(),
    }
}

/// One line a server: connected with its tool count, failed with why, or still connecting.
fn status(servers: &[ServerStatus]) -> String {
    let lines: Vec<String> = servers
        .iter()
        .map(|server| match &server.state {
            ServerState::Connecting => format!("- `{}`: connecting…", server.name),
            ServerState::Connected { tools } => {
                let s = if *tools == 1 { "" } else { "s" };
                format!("- `{}`: connected, {tools} tool{s}", server.name)
            }
            ServerState::Failed { reason } => format!("- `{}`: failed: {reason}", server.name),
        })
        .collect();
    format!("MCP servers:\n{}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(arguments: &[(&str, bool)]) -> McpPrompt {
        McpPrompt {
            server: "files".into(),
            name: "review".into(),
            description: None,
            arguments: arguments.iter().map(|(n, r)| (n.to_string(), *r)).collect(),
        }
    }

    #[test]
    fn words_go_to_the_arguments_in_order_and_the_last_takes_the_rest() {
        let two = prompt(&[("topic", true), ("style", false)]);
        assert_eq!(prompt_hint(&two).as_deref(), Some("<topic> [style]"));
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            prompt_arguments(&two, "parser very long"),
            Ok(pairs(&[("topic", "parser"), ("style", "very long")]))
        );
        assert_eq!(
            prompt_arguments(&two, " parser "),
            Ok(pairs(&[("topic", "parser")]))
        );
        let missing = prompt_arguments(&two, "").unwrap_err();
        assert!(missing.contains("`topic`"), "{missing}");
        let one = prompt(&[("text", true)]);
        assert_eq!(
            prompt_arguments(&one, "all of it"),
            Ok(pairs(&[("text", "all of it")]))
        );
        assert_eq!(prompt_arguments(&prompt(&[]), "ignored"), Ok(Vec::new()));
    }

    #[test]
    fn each_state_reads_as_a_line() {
        let servers = [
            ("a", ServerState::Connecting),
            ("b", ServerState::Connected { tools: 1 }),
            (
                "c",
                ServerState::Failed {
                    reason: "exited with status 3".into(),
                },
            ),
        ]
        .map(|(name, state)| ServerStatus {
            name: name.into(),
            state,
        });
        assert_eq!(
            status(&servers),
            "MCP servers:\n- `a`: connecting…\n- `b`: connected, 1 tool\n- `c`: failed: exited with status 3"
        );
    }
}
