//! The model's context, derived from the session's log — the same rows `session/load`
//! replays, so what the model remembers is what the user sees.

use agent_client_protocol_schema::v1::{ContentBlock, EmbeddedResourceResource};
use serde_json::Value;

use crate::llm::{Message, Role};
use crate::store::Event;

pub fn system_prompt(cwd: &str, additional_dirs: &[String]) -> Message {
    let mut text = format!(
        "You are Hearth, a coding agent working inside the user's editor.\nThe workspace root is {cwd}."
    );
    if !additional_dirs.is_empty() {
        text.push_str(&format!(
            "\nAdditional workspace directories: {}.",
            additional_dirs.join(", ")
        ));
    }
    Message {
        role: Role::System,
        text,
    }
}

/// One message per logged message id: the user's prompts and the agent's answers, in
/// order. Thoughts and informational updates are not part of the conversation.
pub fn messages(events: &[Event]) -> Vec<Message> {
    let mut out: Vec<(Option<String>, Message)> = Vec::new();
    for update in events.iter().filter_map(|e| e.update.as_ref()) {
        let role = match update.get("sessionUpdate").and_then(Value::as_str) {
            Some("user_message_chunk") => Role::User,
            Some("agent_message_chunk") => Role::Assistant,
            _ => continue,
        };
        let Some(text) = update
            .get("content")
            .and_then(|c| serde_json::from_value::<ContentBlock>(c.clone()).ok())
            .and_then(|block| block_text(&block))
        else {
            continue;
        };
        let id = update
            .get("messageId")
            .and_then(Value::as_str)
            .map(str::to_string);
        match out.last_mut() {
            Some((last_id, last)) if last.role == role && *last_id == id => {
                last.text
                    .push_str(if role == Role::User { "\n\n" } else { "" });
                last.text.push_str(&text);
            }
            _ => out.push((id, Message { role, text })),
        }
    }
    out.into_iter().map(|(_, m)| m).collect()
}

/// How a prompt block reads to the model. `None` for blocks we don't accept.
pub fn block_text(block: &ContentBlock) -> Option<String> {
    match block {
        ContentBlock::Text(t) => Some(t.text.clone()),
        ContentBlock::ResourceLink(link) => Some(format!("[{}]({})", link.name, link.uri)),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            EmbeddedResourceResource::TextResourceContents(r) => Some(format!(
                "<resource uri=\"{}\">\n{}\n</resource>",
                r.uri, r.text
            )),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chunk(kind: &str, id: &str, text: &str) -> Event {
        Event::update(
            json!({"sessionUpdate": kind, "messageId": id, "content": {"type": "text", "text": text}}),
        )
    }

    #[test]
    fn one_message_per_id_without_thoughts() {
        let log = vec![
            chunk("user_message_chunk", "u1", "fix the bug"),
            chunk("user_message_chunk", "u1", "in main.rs"),
            chunk("agent_thought_chunk", "a1", "hmm"),
            chunk("agent_message_chunk", "a1", "Done"),
            chunk("agent_message_chunk", "a1", "."),
            Event::update(json!({"sessionUpdate": "session_info_update", "title": "x"})),
            chunk("user_message_chunk", "u2", "thanks"),
        ];
        let texts: Vec<(Role, String)> = messages(&log)
            .into_iter()
            .map(|m| (m.role, m.text))
            .collect();
        assert_eq!(
            texts,
            vec![
                (Role::User, "fix the bug\n\nin main.rs".to_string()),
                (Role::Assistant, "Done.".to_string()),
                (Role::User, "thanks".to_string()),
            ]
        );
    }
}
