//! Plan mode with an exit, end to end: `exit_plan_mode` is offered only in plan mode; it
//! publishes the plan (a `plan` update, the text in the permission request) and asks for
//! approval; approved, the mode changes (`config_option_update` and `current_mode_update`, as
//! `session/set_mode` sends them) and the next write runs; rejected, the session stays in
//! plan mode and writes stay refused. And the audit: nothing in plan mode writes — not
//! `write`, `edit`, `run_command` (here with the sandbox off; confined read-only with it on,
//! `sandbox_escalation.rs`), nor an MCP tool without `readOnlyHint` — while reads still run.

mod common;

use common::final_status;
use common::tools::{answer_by, options_of, session, tool_updates, workspace};
use common::{Setup, call, mcp_server, start, text, tool_results, updates_of};
use serde_json::{Value, json};

const PLAN: &str = "# Plan\n1. Write notes.txt\n2. Tell the user";

fn plan_then_write() -> Setup {
    Setup::new(json!({"responses": [
        call("p", "exit_plan_mode", json!({"plan": PLAN})),
        call("w", "write", json!({"path": "notes.txt", "content": "noted"})),
        text(&["Done."]),
    ]}))
}

/// Plan mode with the sandbox off, so that commands are refused rather than confined.
fn plan_mode() -> Value {
    json!({"permissionMode": "plan", "sandbox": {"mode": "off"}})
}

/// The names of the tools offered in the `n`th model request.
fn offered(setup: &Setup, n: usize) -> Vec<String> {
    setup.mock.requests()[n].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn exit_plan_mode_is_offered_only_in_plan_mode() {
    let setup = Setup::new(json!({"responses": [text(&["a"]), text(&["b"])]}));
    let cwd = workspace(&setup);
    let mut planning = start(&setup, plan_mode());
    let session_id = session(&mut planning, &cwd);
    planning.prompt(&session_id, "plan");
    let mut asking = start(&setup, json!({}));
    let session_id = session(&mut asking, &cwd);
    asking.prompt(&session_id, "do");
    assert!(offered(&setup, 0).contains(&"exit_plan_mode".to_string()));
    assert!(offered(&setup, 0).contains(&"ask_user".to_string()));
    assert!(!offered(&setup, 1).contains(&"exit_plan_mode".to_string()));
    assert!(offered(&setup, 1).contains(&"ask_user".to_string()));
}

#[test]
fn an_approved_plan_switches_the_mode_and_the_next_write_runs() {
    let setup = plan_then_write();
    let cwd = workspace(&setup);
    let mut client = start(&setup, plan_mode());
    let asked = answer_by(&mut client, |_| "accept_edits");
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "make notes")["result"]["stopReason"],
        "end_turn"
    );
    let asked = asked.lock().unwrap();
    assert_eq!(
        asked.len(),
        1,
        "only the plan asked: accept_edits writes inside freely"
    );
    let request = &asked[0];
    assert_eq!(
        options_of(request),
        [
            ["accept_edits", "Yes, and accept edits", "allow_always"],
            ["ask", "Yes, and ask before edits", "allow_once"],
            ["plan", "No, keep planning", "reject_once"],
        ]
    );
    assert_eq!(request["toolCall"]["kind"], "switch_mode");
    assert_eq!(request["toolCall"]["content"][0]["content"]["text"], PLAN);
    let plan = &updates_of(&client, &session, "plan")[0];
    let steps: Vec<&str> = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["Write notes.txt", "Tell the user"]);
    let mode = &updates_of(&client, &session, "current_mode_update")[0];
    assert_eq!(mode["currentModeId"], "accept_edits");
    let options = &updates_of(&client, &session, "config_option_update")[0];
    let mode_option = options["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "mode")
        .unwrap();
    assert_eq!(mode_option["currentValue"], "accept_edits");
    assert!(tool_results(&setup, 1)[0].contains("the mode is now `accept_edits`"));
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "noted"
    );
    assert_eq!(final_status(&client, &session), ["completed", "completed"]);
    // The new mode is the session's: a new prompt is not offered the exit any more.
    assert!(!offered(&setup, 2).contains(&"exit_plan_mode".to_string()));
}

#[test]
fn approving_with_ask_leaves_plan_mode_and_the_write_asks() {
    let setup = plan_then_write();
    let cwd = workspace(&setup);
    let mut client = start(&setup, plan_mode());
    let asked = answer_by(&mut client, |params| {
        if params["toolCall"]["kind"] == "switch_mode" {
            "ask"
        } else {
            "allow_once"
        }
    });
    let session = session(&mut client, &cwd);
    client.prompt(&session, "make notes");
    assert_eq!(asked.lock().unwrap().len(), 2, "the plan, then the write");
    assert_eq!(
        updates_of(&client, &session, "current_mode_update")[0]["currentModeId"],
        "ask"
    );
    assert!(cwd.join("notes.txt").exists());
}

#[test]
fn a_rejected_plan_stays_read_only() {
    let setup = plan_then_write();
    let cwd = workspace(&setup);
    let mut client = start(&setup, plan_mode());
    let asked = answer_by(&mut client, |_| "plan");
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "make notes")["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "the refused write did not ask"
    );
    assert!(updates_of(&client, &session, "current_mode_update").is_empty());
    assert!(updates_of(&client, &session, "config_option_update").is_empty());
    assert!(tool_results(&setup, 1)[0].contains("keep planning"));
    assert!(tool_results(&setup, 2)[1].contains("Plan mode is read-only"));
    assert!(!cwd.join("notes.txt").exists());
    assert_eq!(final_status(&client, &session), ["failed", "failed"]);
}

#[test]
fn nothing_in_plan_mode_writes() {
    let setup = Setup::new(json!({"responses": [
        call("w", "write", json!({"path": "new.txt", "content": "x"})),
        call("e", "edit", json!({"path": "old.txt", "edits": [{"old_text": "one", "new_text": "two"}]})),
        call("r", "run_command", json!({"command": "touch made.txt"})),
        call("m", "mcp__files__add", json!({"a": 1, "b": 2})),
        call("echo", "mcp__files__echo", json!({"text": "reads run"})),
        call("read", "read", json!({"path": "old.txt"})),
        text(&["Only looked."]),
    ]}));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("old.txt"), "one\n").unwrap();
    let mut client = start(&setup, plan_mode());
    let asked = answer_by(&mut client, |_| "allow_once");
    let created = client.call(
        "session/new",
        json!({"cwd": cwd, "mcpServers": [mcp_server("files", &[])]}),
    );
    let session = created["sessionId"].as_str().unwrap().to_string();
    client.prompt(&session, "change things");
    assert!(
        asked.lock().unwrap().is_empty(),
        "plan refuses; it never asks"
    );
    assert!(!cwd.join("new.txt").exists() && !cwd.join("made.txt").exists());
    assert_eq!(
        std::fs::read_to_string(cwd.join("old.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(
        final_status(&client, &session),
        [
            "failed",
            "failed",
            "failed",
            "failed",
            "completed",
            "completed"
        ]
    );
    let results = tool_results(&setup, 6);
    for refused in &results[..4] {
        assert!(refused.contains("Plan mode"), "{refused}");
    }
    assert_eq!(results[4], "reads run");
    let kinds: Vec<Value> = tool_updates(&client, &session)
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| u["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        ["edit", "edit", "execute", "other", "read", "read"],
        "every kind of writing tool was tried"
    );
}

#[test]
fn outside_plan_mode_the_exit_changes_nothing_and_asks_nothing() {
    let setup = Setup::new(json!({"responses": [
        call("p", "exit_plan_mode", json!({"plan": PLAN})),
        text(&["Right."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "accept_edits"}));
    let asked = answer_by(&mut client, |_| "ask");
    let session = session(&mut client, &cwd);
    client.prompt(&session, "go");
    assert!(asked.lock().unwrap().is_empty());
    assert!(updates_of(&client, &session, "plan").is_empty());
    assert!(updates_of(&client, &session, "current_mode_update").is_empty());
    assert!(
        tool_results(&setup, 1)[0].starts_with("Not in plan mode (the mode is `accept_edits`)")
    );
}
