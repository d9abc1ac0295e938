//! Commands Hearth runs itself (always, while the sandbox confines them: a process the
//! client's `terminal/create` starts cannot be confined), shown to a client that advertised
//! `clientCapabilities._meta.terminal_output: true` as a display terminal — the convention
//! claude-agent-acp uses and Zed decodes: the `execute` tool call opens with a `terminal`
//! content block and `_meta.terminal_info {terminal_id}`, its output streams as
//! `_meta.terminal_output {terminal_id, data}` deltas (every client gets those; the log's
//! `ToolCallOutput`), and its last update carries `_meta.terminal_exit {terminal_id,
//! exit_code, signal}`. The terminal's id is the tool call's. A client without the
//! capability sees the output as the call's text content when it ends.
//!
//! Live frames only: a replay shows the call as the log has it, its output as text.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::{Value, json};

/// The display terminals one connection has open, by tool call id.
#[derive(Default)]
pub struct DisplayTerminals {
    open: Mutex<HashSet<String>>,
}

impl DisplayTerminals {
    /// `update` as a client that shows display terminals sees it.
    pub fn shown(&self, update: &Value) -> Option<Value> {
        let id = update.get("toolCallId")?.as_str()?;
        match update.get("sessionUpdate")?.as_str()? {
            "tool_call" if update.get("kind") == Some(&json!("execute")) => {
                self.lock().insert(id.to_owned());
                Some(opened(update, id))
            }
            "tool_call_update" if ended(update) && self.lock().remove(id) => {
                Some(closed(update, id))
            }
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn ended(update: &Value) -> bool {
    matches!(
        update.get("status").and_then(Value::as_str),
        Some("completed" | "failed")
    )
}

fn terminal_block(id: &str) -> Value {
    json!({ "type": "terminal", "terminalId": id })
}

fn opened(update: &Value, id: &str) -> Value {
    let mut update = update.clone();
    update["content"] = json!([terminal_block(id)]);
    meta(&mut update).insert("terminal_info".into(), json!({ "terminal_id": id }));
    update
}

/// The last update: the terminal stays the call's content (unless the command ran in a
/// client terminal after all, with the sandbox off, or never ran and says why), and it exits.
fn closed(update: &Value, id: &str) -> Value {
    let mut update = update.clone();
    let raw = update.get("rawOutput").cloned().unwrap_or(Value::Null);
    let in_client_terminal = update["content"]
        .as_array()
        .is_some_and(|content| content.iter().any(|c| c["type"] == "terminal"));
    if update["status"] == "completed" && !in_client_terminal {
        update["content"] = json!([terminal_block(id)]);
    }
    let exit = json!({
        "terminal_id": id,
        "exit_code": raw.get("exitCode").cloned().unwrap_or(Value::Null),
        "signal": raw.get("signal").cloned().unwrap_or(Value::Null),
    });
    meta(&mut update).insert("terminal_exit".into(), exit);
    update
}

fn meta(update: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !update["_meta"].is_object() {
        update["_meta"] = json!({});
    }
    update["_meta"]
        .as_object_mut()
        .expect("`_meta` was just made an object")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_execute_call_opens_streams_into_and_closes_its_terminal() {
        let terminals = DisplayTerminals::default();
        let start = json!({"sessionUpdate": "tool_call", "toolCallId": "tc_1", "kind": "execute", "status": "pending"});
        let opened = terminals.shown(&start).unwrap();
        assert_eq!(
            opened["content"],
            json!([{"type": "terminal", "terminalId": "tc_1"}])
        );
        assert_eq!(opened["_meta"]["terminal_info"]["terminal_id"], "tc_1");
        let delta = json!({"sessionUpdate": "tool_call_update", "toolCallId": "tc_1", "_meta": {"terminal_output": {"terminal_id": "tc_1", "data": "hi\n"}}});
        assert_eq!(terminals.shown(&delta), None, "deltas go as they are");
        let end = json!({"sessionUpdate": "tool_call_update", "toolCallId": "tc_1", "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "hi"}}],
            "rawOutput": {"exitCode": 3, "signal": null}, "_meta": {"hearth": {"sandbox": {}}}});
        let closed = terminals.shown(&end).unwrap();
        assert_eq!(
            closed["content"],
            json!([{"type": "terminal", "terminalId": "tc_1"}])
        );
        assert_eq!(
            closed["_meta"]["terminal_exit"],
            json!({"terminal_id": "tc_1", "exit_code": 3, "signal": null})
        );
        assert!(closed["_meta"]["hearth"]["sandbox"].is_object());
        assert_eq!(terminals.shown(&end), None, "closed once");
    }

    #[test]
    fn other_calls_and_refusals_keep_their_content() {
        let terminals = DisplayTerminals::default();
        let read = json!({"sessionUpdate": "tool_call", "toolCallId": "tc_2", "kind": "read"});
        assert_eq!(terminals.shown(&read), None);
        let start = json!({"sessionUpdate": "tool_call", "toolCallId": "tc_3", "kind": "execute"});
        terminals.shown(&start);
        let refused = json!({"sessionUpdate": "tool_call_update", "toolCallId": "tc_3", "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": "rejected"}}]});
        let closed = terminals.shown(&refused).unwrap();
        assert_eq!(closed["content"], refused["content"]);
        assert_eq!(closed["_meta"]["terminal_exit"]["exit_code"], Value::Null);
    }
}
