//! Closing what a crash left open. A session restored from the store may hold tool calls
//! that never got a final status (the engine was killed mid-call); without one, a client
//! replaying the session shows them running forever.

use std::collections::HashMap;

use super::Session;
use super::events::{CallStatus, EventSink, Recorded, SessionEvent, ToolOutcome, Visibility};
use crate::store::StoreOp;

/// Gives every tool call left open in the log a final `failed` status, for the next replay,
/// and clears the session's `turn_running` flag.
pub async fn close_interrupted_tool_calls(session: &Session) {
    let ctx = session.ctx();
    let id = session.id.clone();
    let events = match ctx.read(move |log| log.events(&id)).await {
        Ok(events) => events,
        Err(e) => {
            tracing::error!(session = %session.id, error = %e, "cannot read the log to close interrupted tool calls");
            return;
        }
    };
    ctx.write(StoreOp::SetTurnRunning {
        session_id: session.id.clone(),
        running: false,
    });
    let format = ctx.log();
    let logged = events.iter().filter_map(|e| e.update.as_ref());
    for id in open_tool_calls(logged.map(|update| format.decode(update))) {
        let text = "Interrupted: Hearth stopped before this tool call finished.";
        let outcome = ToolOutcome::Failed(text.into());
        session.emit(
            SessionEvent::ToolCallFinished { id, outcome },
            Visibility::ReplayOnly,
        );
    }
}

/// Tool calls whose last status is not final, in the order they were announced.
fn open_tool_calls(logged: impl Iterator<Item = Recorded>) -> Vec<String> {
    let mut order = Vec::new();
    let mut last: HashMap<String, CallStatus> = HashMap::new();
    for record in logged {
        let Recorded::ToolCall {
            id,
            announced,
            status,
        } = record
        else {
            continue;
        };
        if announced {
            order.push(id.clone());
            last.insert(id, status.unwrap_or(CallStatus::Pending));
        } else if let Some(status) = status {
            last.insert(id, status);
        }
    }
    order
        .into_iter()
        .filter(|id| last.get(id).is_some_and(|s| !s.is_final()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, announced: bool, status: Option<CallStatus>) -> Recorded {
        Recorded::ToolCall {
            id: id.into(),
            announced,
            status,
        }
    }

    #[test]
    fn finds_the_calls_without_a_final_status() {
        use CallStatus::*;
        let logged = vec![
            call("a", true, Some(Pending)),
            call("a", false, Some(Completed)),
            call("b", true, None),
            call("b", false, Some(InProgress)),
            call("c", true, Some(Pending)),
            call("c", false, Some(Failed)),
            Recorded::Other,
            call("d", true, None),
        ];
        assert_eq!(open_tool_calls(logged.into_iter()), ["b", "d"]);
    }
}
