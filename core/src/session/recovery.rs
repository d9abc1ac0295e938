//! Closing what a crash left open. A session restored from the store may hold tool calls
//! that never got a final status (the engine was killed mid-call); without one, a client
//! replaying the session shows them running forever.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use super::Session;
use crate::engine::Shared;
use crate::store::Event;

/// Gives every tool call left open in the log a final `failed` status, for the next replay,
/// and clears the session's `turn_running` flag.
pub async fn close_interrupted_tool_calls(shared: &Arc<Shared>, session: &Session) {
    shared.outbox.flushed().await;
    let (store, id) = (shared.store.clone(), session.id.clone());
    let events = match tokio::task::spawn_blocking(move || store.events(&id)).await {
        Ok(Ok(events)) => events,
        other => {
            tracing::error!(session = %session.id, ?other, "cannot read the log to close interrupted tool calls");
            return;
        }
    };
    shared.outbox.write(
        crate::store::StoreOp::SetTurnRunning {
            session_id: session.id.clone(),
            running: false,
        },
        None,
    );
    for id in open_tool_calls(&events) {
        let text = "Interrupted: Hearth stopped before this tool call finished.";
        session.record_for_replay(
            shared,
            json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": id,
                "status": "failed",
                "content": [{ "type": "content", "content": { "type": "text", "text": text } }],
            }),
        );
    }
}

/// Tool calls whose last status is not final, in the order they were announced.
fn open_tool_calls(events: &[Event]) -> Vec<String> {
    let mut order = Vec::new();
    let mut last: HashMap<String, String> = HashMap::new();
    for update in events.iter().filter_map(|e| e.update.as_ref()) {
        let kind = update["sessionUpdate"].as_str();
        let Some(id) = update["toolCallId"].as_str() else {
            continue;
        };
        match kind {
            Some("tool_call") => {
                order.push(id.to_string());
                let status = update["status"].as_str().unwrap_or("pending");
                last.insert(id.to_string(), status.to_string());
            }
            Some("tool_call_update") => {
                if let Some(status) = update["status"].as_str() {
                    last.insert(id.to_string(), status.to_string());
                }
            }
            _ => {}
        }
    }
    order
        .into_iter()
        .filter(|id| {
            last.get(id)
                .is_some_and(|s| s != "completed" && s != "failed")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn update(value: Value) -> Event {
        Event::update(value)
    }

    #[test]
    fn finds_the_calls_without_a_final_status() {
        let events = vec![
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A", "status": "pending"}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "completed"}),
            ),
            update(json!({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "B"})),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "in_progress"}),
            ),
            update(
                json!({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "C", "status": "pending"}),
            ),
            update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "failed"}),
            ),
            update(json!({"sessionUpdate": "tool_call", "toolCallId": "d", "title": "D"})),
        ];
        assert_eq!(open_tool_calls(&events), ["b", "d"]);
    }
}
