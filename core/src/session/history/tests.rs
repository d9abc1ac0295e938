use serde_json::{Value, json};

use super::*;
use crate::config::ProviderName;
use crate::session::events::SessionEvent;

/// Logged updates here are `{"kind", "id", "text"}`: the context only needs to know which
/// ones are user text (the ACP v1 decoding is tested in `acp/updates.rs`).
struct Format;

impl LogFormat for Format {
    fn encode(&self, _: SessionEvent) -> Value {
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

/// The context `events` make, as the live session made it from them.
fn replay(events: &[Event]) -> History {
    let mut history = History::default();
    for event in events {
        history.observe(event, &Format);
    }
    history
}

/// The context of a session whose log is `events`, as it comes up again.
fn rebuild(events: &[Event]) -> History {
    replay(events).restarted()
}

fn chunk(kind: &str, id: &str, text: &str) -> Event {
    Event::update(json!({"kind": kind, "id": id, "text": text}))
}

fn model(message: Message) -> Event {
    Event {
        update: None,
        model: Some(json!({ "message": message })),
    }
}

fn call(id: &str) -> AssistantPart {
    AssistantPart::ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: "{}".into(),
    }
}

fn result(id: &str, content: &str) -> ToolResult {
    ToolResult::text(id.into(), "read".into(), content.into(), false)
}

fn text(text: &str) -> UserPart {
    UserPart::Text { text: text.into() }
}

fn result_ids(messages: &[Message]) -> Vec<Vec<&str>> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResults { results } => {
                Some(results.iter().map(|r| r.call_id.as_str()).collect())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn interrupted_tool_calls_get_a_result() {
    let log = vec![
        chunk("user_message_chunk", "u1", "go"),
        model(Message::Assistant {
            parts: vec![call("a"), call("b")],
        }),
        model(Message::ToolResults {
            results: vec![result("a", "ok")],
        }),
        model(Message::Assistant {
            parts: vec![call("c")],
        }),
        chunk("user_message_chunk", "u2", "again"),
        model(Message::Assistant {
            parts: vec![call("d")],
        }),
    ];
    let history = rebuild(&log);
    let messages = history.messages();
    assert_eq!(
        result_ids(&messages),
        vec![vec!["a", "b"], vec!["c"], vec!["d"]]
    );
    assert!(matches!(messages[5], Message::User { .. }));
    assert!(history.open_calls().is_empty());
}

#[test]
fn user_chunks_and_model_messages_in_order() {
    let assistant = |text: &str| {
        model(Message::Assistant {
            parts: vec![AssistantPart::Text { text: text.into() }],
        })
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
        *rebuild(&log).messages(),
        vec![
            Message::User {
                content: vec![text("fix the bug"), text("in main.rs")]
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

/// The live path and the rebuild agree: feeding rows one by one as they are logged gives the
/// context a restart rebuilds, compactions included.
#[test]
fn a_compaction_rewrites_the_context_the_same_way_live_and_rebuilt() {
    let compaction = Compaction {
        id: "cmp_1".into(),
        pruned: vec!["a".into()],
        summary: Some(Message::user_text("Summary: read two files.")),
        keep_from: 3,
    };
    let log = vec![
        chunk("user_message_chunk", "u1", "read a and b"),
        model(Message::Assistant {
            parts: vec![call("a"), call("b")],
        }),
        model(Message::ToolResults {
            results: vec![result("a", "AAAA"), result("b", "BBBB")],
        }),
        model(Message::Assistant {
            parts: vec![AssistantPart::Text {
                text: "Both read.".into(),
            }],
        }),
        Event {
            update: None,
            model: Some(compaction.to_model()),
        },
        chunk("user_message_chunk", "u2", "next"),
    ];
    let mut live = History::default();
    live.fix_system(Arc::from("system"));
    for event in &log {
        live.observe(event, &Format);
    }
    let rebuilt = rebuild(&log);
    assert_eq!(live.messages(), rebuilt.messages());
    assert_eq!(
        *rebuilt.messages(),
        vec![
            Message::user_text("Summary: read two files."),
            Message::Assistant {
                parts: vec![AssistantPart::Text {
                    text: "Both read.".into()
                }]
            },
            Message::user_text("next"),
        ]
    );
    assert_eq!(
        live.system(),
        None,
        "a compaction re-reads the system prompt"
    );
    assert_eq!(live.weight(), rebuilt.weight());
}

#[test]
fn pruning_clears_the_bodies_of_the_named_results_only() {
    let mut history = History::default();
    history.push(Message::user_text("go"));
    history.push(Message::Assistant {
        parts: vec![call("a"), call("b")],
    });
    history.push(Message::ToolResults {
        results: vec![result("a", &"x".repeat(1000)), result("b", "kept")],
    });
    let before = history.weight();
    history.apply(&Compaction {
        id: "cmp".into(),
        pruned: vec!["a".into()],
        summary: None,
        keep_from: 0,
    });
    let messages = history.messages();
    let Message::ToolResults { results } = &messages[2] else {
        panic!("{messages:?}")
    };
    assert_eq!(results[0].content, cleared_note("read"));
    assert_eq!(results[1].content, "kept");
    assert_eq!(messages.len(), 3);
    assert!(history.weight() < before - 900);
}

#[test]
fn the_estimate_starts_from_the_providers_count() {
    let mut history = History::default();
    history.push(Message::user_text("x".repeat(400)));
    assert_eq!(history.estimate_tokens(|| 400), 200);
    history.calibrate(1000, history.weight());
    history.push(Message::user_text("y".repeat(80)));
    assert_eq!(history.estimate_tokens(|| unreachable!()), 1020);
}

/// Appending while no request holds the messages does not copy them.
#[test]
fn appending_shares_the_messages_with_no_one() {
    let mut history = History::default();
    history.push(Message::user_text("one"));
    let held = history.messages();
    history.push(Message::user_text("two"));
    assert_eq!(
        held.len(),
        1,
        "a request in flight keeps what it was built from"
    );
    drop(held);
    let before = Arc::as_ptr(&history.messages);
    history.push(Message::user_text("three"));
    assert_eq!(Arc::as_ptr(&history.messages), before);
}

fn dialect(provider: ProviderName, images: bool) -> wire::Dialect {
    wire::Dialect { provider, images }
}

/// What a request does to the wire: encodes the messages it was given that the cache lacks.
fn send(history: &History) {
    let (earlier, messages) = history.kept();
    let encode = |m: &Message| wire::Encoded {
        role: wire::Role::Own,
        parts: vec![serde_json::to_string(m).unwrap()],
    };
    wire::with_encoded(
        &history.wire,
        dialect(ProviderName::Openai, true),
        (earlier, &messages),
        encode,
        |_| (),
    );
}

/// A logged history keeps only what no request encoded yet (and the newest message); taking
/// the rest back from its log gives the context a history that kept everything has.
#[test]
fn a_logged_history_lets_go_of_what_was_sent_and_takes_it_back_from_the_log() {
    let mut log = vec![
        chunk("user_message_chunk", "u1", "go"),
        model(Message::Assistant {
            parts: vec![call("a")],
        }),
    ];
    // A restart answers the interrupted call with a result the log does not hold.
    let mut live = rebuild(&log).logged();
    let mut kept_all = rebuild(&log);
    let mut step = |message: Message, log: &mut Vec<Event>| {
        log.push(model(message.clone()));
        send(&live);
        live.push(message.clone());
        kept_all.push(message);
    };
    step(Message::user_text("again"), &mut log);
    for id in ["b", "c"] {
        step(
            Message::Assistant {
                parts: vec![call(id)],
            },
            &mut log,
        );
        step(
            Message::ToolResults {
                results: vec![result(id, "ok")],
            },
            &mut log,
        );
    }
    let (earlier, kept) = live.kept();
    assert_eq!(
        (earlier, kept.len()),
        (7, 1),
        "only the unsent newest is kept"
    );
    assert!(live.encodes_for(dialect(ProviderName::Openai, true)));
    assert!(!live.encodes_for(dialect(ProviderName::Anthropic, true)));
    assert!(
        !live.encodes_for(dialect(ProviderName::Openai, false)),
        "images as notes, for a model without vision"
    );
    assert_eq!(live.weight(), kept_all.weight());
    live.take_back(replay(&log));
    assert!(live.is_whole());
    assert_eq!(live.messages(), kept_all.messages());
}
