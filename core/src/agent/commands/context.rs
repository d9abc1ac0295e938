//! `/context`: where the model's context goes — the system prompt, the tools (built-in, then
//! each MCP server's), the conversation's messages — against the model's window, and what a
//! compaction would free now (`compaction::preview`), and what the session spent where the
//! model has a price. The parts are the engine's own estimate (bytes ÷ 4); the total is the
//! provider's last count when there is one.

use crate::agent::{compaction, request};
use crate::chat::{Message, ToolSpec};
use crate::session::Session;
use crate::session::history::BYTES_PER_TOKEN;

/// The answer to `/context`.
pub async fn report(session: &Session) -> String {
    // The parts and the preview read every message.
    if let Err(e) = session.recall().await {
        return format!("Cannot read the conversation back from the session's log: {e}");
    }
    let (used, window) = compaction::pressure(session);
    let model = session.state().settings.model.clone();
    let system = request::system(session).len();
    let specs = session.tool_specs();
    let messages = session.history().messages();
    let mut lines = vec![
        format!(
            "Context of `{model}`: about {} of {} tokens ({:.0}%).",
            used,
            window,
            used as f64 * 100.0 / window.max(1) as f64
        ),
        String::new(),
        format!("- System prompt: {} tokens", tokens(system)),
    ];
    lines.extend(tool_lines(&specs));
    lines.push(message_line(&messages));
    if let Some(cost) = crate::agent::stream::spent(session) {
        lines.push(format!(
            "- Spent by this session: {:.4} {}",
            cost.amount, cost.currency
        ));
    }
    let preview = compaction::preview(session);
    lines.push(String::new());
    lines.push(format!(
        "`/compact` would clear the output of {} earlier tool calls (about {} tokens) and \
         summarise {} messages (about {} tokens), keeping the newest as they are.",
        preview.cleared_results,
        preview.cleared_tokens,
        preview.summarised_messages,
        preview.summarised_tokens
    ));
    lines.join("\n")
}

fn tokens(bytes: usize) -> u64 {
    (bytes / BYTES_PER_TOKEN) as u64
}

/// One line for the built-in tools, then one per MCP server (`mcp__<server>__<tool>`).
fn tool_lines(specs: &[ToolSpec]) -> Vec<String> {
    let mut groups: Vec<(String, usize, usize)> = Vec::new();
    for spec in specs {
        let owner = spec
            .name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"))
            .map_or("built-in".to_string(), |(server, _)| {
                format!("MCP server `{server}`")
            });
        let bytes = spec.name.len() + spec.description.len() + spec.parameters.to_string().len();
        match groups.iter_mut().find(|(known, ..)| *known == owner) {
            Some((_, count, total)) => {
                *count += 1;
                *total += bytes;
            }
            None => groups.push((owner, 1, bytes)),
        }
    }
    groups
        .into_iter()
        .map(|(owner, count, bytes)| {
            format!("- Tools, {owner}: {count} tools, {} tokens", tokens(bytes))
        })
        .collect()
}

/// The conversation, with how much of it is tool output.
fn message_line(messages: &[Message]) -> String {
    let weight = |m: &Message| crate::session::history::message_weight(m);
    let total: usize = messages.iter().map(weight).sum();
    let results: usize = messages
        .iter()
        .filter(|m| matches!(m, Message::ToolResults { .. }))
        .map(weight)
        .sum();
    format!(
        "- Messages: {} messages, {} tokens ({} of them tool output)",
        messages.len(),
        tokens(total),
        tokens(results)
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: "d".repeat(39),
            parameters: json!({}).into(),
        }
    }

    #[test]
    fn tools_are_counted_per_mcp_server_after_the_built_ins() {
        let specs = [
            spec("read"),
            spec("mcp__git__log"),
            spec("mcp__files__read_file"),
            spec("mcp__git__diff"),
        ];
        assert_eq!(
            tool_lines(&specs),
            [
                "- Tools, built-in: 1 tools, 11 tokens",
                "- Tools, MCP server `git`: 2 tools, 27 tokens",
                "- Tools, MCP server `files`: 1 tools, 15 tokens",
            ]
        );
    }
}
