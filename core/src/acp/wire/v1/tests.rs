//! The v1 wire's frames and its fallbacks, event by event. End to end: `core/tests/
//! long_sessions.rs` (compactions for both kinds of client; a replay of the stand-in),
//! `mcp.rs` (a failed server as a failed call and as a notice), `undo.rs` (a notice as an
//! agent line).

use serde_json::value::RawValue;

use super::*;
use crate::session::events::{CompactionEnd, CompactionFigures};

fn wire(notices: bool, compaction: bool) -> V1Wire {
    V1Wire::new(Shows {
        notices,
        compaction,
        terminal_output: false,
        session_failure: false,
        subagents: false,
    })
}

fn compaction_events() -> Vec<SessionEvent> {
    let id = || "cmp_1".to_string();
    let figures = CompactionFigures {
        trigger: CompactionTrigger::Overflow,
        tokens_before: 900,
        tokens_after: 100,
    };
    vec![
        SessionEvent::CompactionStarted {
            id: id(),
            trigger: CompactionTrigger::Overflow,
        },
        SessionEvent::CompactionChunk {
            id: id(),
            text: "Goal".into(),
        },
        SessionEvent::CompactionCompleted {
            id: id(),
            summary: "Goal: x".into(),
            figures,
        },
        SessionEvent::CompactionEnded {
            id: id(),
            end: CompactionEnd::Failed,
            message: "HTTP 500".into(),
        },
    ]
}

#[test]
fn a_client_that_shows_compactions_is_told_them_as_they_are() {
    for event in compaction_events() {
        assert_eq!(wire(false, true).present(event.clone()), Some(event));
    }
}

#[test]
fn a_client_that_does_not_show_compactions_sees_a_think_call() {
    let presented: Vec<_> = compaction_events()
        .into_iter()
        .map(|event| wire(true, false).present(event))
        .collect();
    let start = ToolCallStart {
        id: "cmp_1".into(),
        title: "Compacting conversation".into(),
        kind: Kind::Think,
        locations: Vec::new(),
        raw_input: json!({ "trigger": "overflow" }),
        name: "compact".into(),
        diffs: Vec::new(),
    };
    let completed = ToolOutcome::Completed {
        content: vec![ToolContent::Text("Goal: x".into())],
        raw_output: Some(json!({ "trigger": "overflow", "preTokens": 900, "postTokens": 100 })),
        meta: None,
    };
    let finished = |outcome| {
        Some(SessionEvent::ToolCallFinished {
            id: "cmp_1".into(),
            outcome,
        })
    };
    assert_eq!(
        presented,
        vec![
            Some(SessionEvent::ToolCallStarted(start)),
            // The summary arrives whole, with the finished call.
            None,
            finished(completed),
            finished(ToolOutcome::Failed("HTTP 500".into())),
        ]
    );
}

#[test]
fn a_notice_is_a_notice_or_an_agent_line() {
    let notice = SessionEvent::Notice {
        title: "Undo left files alone".into(),
        description: "a.txt changed".into(),
    };
    assert_eq!(
        wire(true, false).present(notice.clone()),
        Some(notice.clone())
    );
    let Some(SessionEvent::MessageChunk { message_id, text }) = wire(false, true).present(notice)
    else {
        panic!("a client without notices reads an agent line");
    };
    assert!(message_id.starts_with("msg_"), "{message_id}");
    assert_eq!(text, "**Undo left files alone:** a.txt changed\n");
}

#[test]
fn a_failed_service_is_a_notice_or_a_failed_call() {
    let failed = SessionEvent::ServiceFailed {
        id: "mcp_1".into(),
        title: "MCP server `x` is unavailable".into(),
        message: "exited".into(),
    };
    assert_eq!(
        wire(true, false).present(failed.clone()),
        Some(SessionEvent::Notice {
            title: "MCP server `x` is unavailable".into(),
            description: "exited".into(),
        })
    );
    assert_eq!(wire(false, true).present(failed.clone()), Some(failed));
}

/// Replay frames the stored text of an update; live frames serialize its value.
#[test]
fn a_stored_update_frames_like_its_value() {
    let update = json!({"sessionUpdate": "plan", "z": [1.5, -0.0, 1e300], "a": "é \"q\"\n\u{1}"});
    let stored = RawValue::from_string(update.to_string()).unwrap();
    // Ids are the engine's own (`sess_` and hex), but nothing here relies on that.
    for id in ["sess_0123abcd", "odd \"id\"\\\n\u{7f}é"] {
        assert_eq!(stored_update_frame(id, &stored), update_frame(id, &update));
    }
}
