//! Closing what a crash left open. A session restored from the store may hold tool calls
//! that never got a final status (the engine was killed mid-call); without one, a client
//! replaying the session shows them running forever.
//!
//! A turn is interrupted only when no engine will finish it: the engine that recorded it
//! (`running_turns`) is gone — its lock in the data dir is free (`store/engines.rs`) — or no
//! engine owns it (set by an older Hearth, which named none, or copied by a fork mid-turn).
//! Several processes may share a data dir, so a session restored here may have a turn
//! running in another engine: its calls are live, and nothing is written for them. While
//! any turn of the session is live (another engine's, or this one's) none is closed, since
//! the log does not say whose its open calls are; the session is checked again at its next
//! load or resume (`catch_up.rs`), and closed once every owner is gone.

use std::collections::HashMap;

use super::Session;
use super::events::{CallStatus, Recorded, SessionEvent, ToolOutcome};
use crate::store::{Event, Interrupted, StoreOp, now};

/// The turns the store records as running on a session.
#[derive(Debug, Default)]
pub struct RecordedTurns {
    /// The engines that recorded them.
    pub engines: Vec<String>,
    /// One that no engine owns (`SessionRecord::orphaned_turn`).
    pub orphaned: bool,
}

/// Closes the session's interrupted turns if every turn recorded on it is: gives every tool
/// call left open in the log a final `failed` status, for the next replay, and takes the
/// turns out of the store — in one write, which appends nothing if another engine closed them
/// first. Returns whether a turn of the session is running in a live engine, so that the
/// session must be checked again later.
pub async fn close_interrupted_turns(session: &Session, turns: RecordedTurns) -> bool {
    if turns.engines.is_empty() && !turns.orphaned {
        return false;
    }
    let ctx = session.ctx();
    let (gone, live): (Vec<String>, Vec<String>) = tokio::task::block_in_place(|| {
        (turns.engines.into_iter()).partition(|engine| ctx.engine_is_gone(engine))
    });
    if !live.is_empty() {
        return true;
    }
    let id = session.id.clone();
    let events = match ctx.read(move |log| log.events(&id)).await {
        Ok(events) => events,
        Err(e) => {
            tracing::error!(session = %session.id, error = %e, "cannot read the log to close interrupted tool calls");
            return false;
        }
    };
    let format = ctx.log();
    let logged = events.iter().filter_map(|e| e.update.as_ref());
    let closing = open_tool_calls(logged.map(|update| format.decode(update)))
        .into_iter()
        .map(|id| {
            let text = "Interrupted: Hearth stopped before this tool call finished.";
            let outcome = ToolOutcome::Failed(text.into());
            // Logged as `emit` logs it for replay only (every wire shows it as it is).
            Event::update(format.encode(SessionEvent::ToolCallFinished { id, outcome }))
        })
        .collect();
    ctx.write(StoreOp::CloseInterrupted(Interrupted {
        session_id: session.id.clone(),
        engines: gone,
        orphaned: turns.orphaned,
        closing,
        at: now(),
    }));
    false
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
