//! The model's context, derived from the session's log — the same rows `session/load`
//! replays, so what the model remembers is what the user sees.

use crate::chat::{AssistantPart, Message, ToolResult};
use crate::session::events::{EventFormat, Recorded};
use crate::store::Event;

/// The conversation: the user's prompts (from their logged chunks, one message per prompt)
/// and every model-side message the turn loop logged (`{"message": …}` in the model column).
pub fn messages(events: &[Event], format: &dyn EventFormat) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut last_user_id: Option<String> = None;
    for event in events {
        if let Some(message) = event.model.as_ref().and_then(|m| m.get("message")) {
            if let Ok(message) = serde_json::from_value::<Message>(message.clone()) {
                out.push(message);
                last_user_id = None;
            }
            continue;
        }
        let Some(update) = event.update.as_ref() else {
            continue;
        };
        let Recorded::UserPart {
            message_id: id,
            part,
        } = format.decode(update)
        else {
            continue;
        };
        match out.last_mut() {
            Some(Message::User { content }) if id.is_some() && id == last_user_id => {
                content.push(part)
            }
            _ => {
                out.push(Message::User {
                    content: vec![part],
                });
                last_user_id = id;
            }
        }
    }
    answer_interrupted_calls(out)
}

/// Every tool call needs a result before the conversation goes on, or providers refuse it.
/// A turn cut short by a crash or a shutdown can leave calls without one: give them one.
fn answer_interrupted_calls(messages: Vec<Message>) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len());
    let mut iter = messages.into_iter().peekable();
    while let Some(message) = iter.next() {
        let calls: Vec<(String, String)> = match &message {
            Message::Assistant { parts } => parts
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        out.push(message);
        if calls.is_empty() {
            continue;
        }
        let mut results = match iter.peek() {
            Some(Message::ToolResults { .. }) => match iter.next() {
                Some(Message::ToolResults { results }) => results,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        for (id, name) in calls {
            if !results.iter().any(|r| r.call_id == id) {
                results.push(ToolResult::text(
                    id,
                    name,
                    "Not run: the turn was interrupted.".into(),
                    true,
                ));
            }
        }
        out.push(Message::ToolResults { results });
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::chat::UserPart;
    use crate::session::events::SessionEvent;

    /// Logged updates here are `{"kind", "id", "text"}`: the context only needs to know which
    /// ones are user text (the ACP v1 decoding is tested in `acp/updates.rs`).
    struct Format;

    impl EventFormat for Format {
        fn encode(&self, _: SessionEvent) -> Value {
            unreachable!()
        }
        fn frame(&self, _: &str, _: &Value) -> String {
            unreachable!()
        }
        fn decode(&self, update: &Value) -> Recorded {
            match update["kind"].as_str() {
                Some("user_message_chunk") => Recorded::UserPart {
                    message_id: update["id"].as_str().map(str::to_string),
                    part: UserPart::Text {
                        text: update["text"].as_str().unwrap().to_string(),
                    },
                },
                _ => Recorded::Other,
            }
        }
    }

    fn chunk(kind: &str, id: &str, text: &str) -> Event {
        Event::update(json!({"kind": kind, "id": id, "text": text}))
    }

    #[test]
    fn interrupted_tool_calls_get_a_result() {
        let call = |id: &str| AssistantPart::ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: "{}".into(),
        };
        let model = |m: Message| Event {
            update: None,
            model: Some(json!({"message": m})),
        };
        let log = vec![
            chunk("user_message_chunk", "u1", "go"),
            model(Message::Assistant {
                parts: vec![call("a"), call("b")],
            }),
            model(Message::ToolResults {
                results: vec![ToolResult::text(
                    "a".into(),
                    "read".into(),
                    "ok".into(),
                    false,
                )],
            }),
            model(Message::Assistant {
                parts: vec![call("c")],
            }),
            chunk("user_message_chunk", "u2", "again"),
        ];
        let messages = messages(&log, &Format);
        let results: Vec<Vec<&str>> = messages
            .iter()
            .filter_map(|m| match m {
                Message::ToolResults { results } => {
                    Some(results.iter().map(|r| r.call_id.as_str()).collect())
                }
                _ => None,
            })
            .collect();
        assert_eq!(results, vec![vec!["a", "b"], vec!["c"]]);
        assert!(matches!(messages.last(), Some(Message::User { .. })));
    }

    #[test]
    fn user_chunks_and_model_messages_in_order() {
        let assistant = |text: &str| Event {
            update: None,
            model: Some(
                json!({"message": Message::Assistant { parts: vec![AssistantPart::Text { text: text.into() }] }}),
            ),
        };
        let log = vec![
            chunk("user_message_chunk", "u1", "fix the bug"),
            chunk("user_message_chunk", "u1", "in main.rs"),
            chunk("agent_thought_chunk", "a1", "hmm"),
            chunk("agent_message_chunk", "a1", "Done."),
            assistant("Done."),
            Event::update(json!({"kind": "session_info_update", "title": "x"})),
            chunk("user_message_chunk", "u2", "thanks"),
        ];
        assert_eq!(
            messages(&log, &Format),
            vec![
                Message::User {
                    content: vec![
                        UserPart::Text {
                            text: "fix the bug".into()
                        },
                        UserPart::Text {
                            text: "in main.rs".into()
                        }
                    ]
                },
                Message::Assistant {
                    parts: vec![AssistantPart::Text {
                        text: "Done.".into()
                    }]
                },
                Message::user_text("thanks"),
            ]
        );
    }
}
