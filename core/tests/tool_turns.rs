//! Turns that use tools: the loop (a read's result reaches the model, failures go back to it),
//! streamed and bounded command output, the step limit, summarised huge edits, and replay.
//! Elsewhere: permissions (`permissions.rs`), cancel (`cancel.rs`), the client's fs and
//! terminals (`client_io.rs`), the providers in a tool loop (`providers.rs`), MCP and LSP
//! tools (`mcp.rs`, `lsp.rs`).

mod common;

use common::final_status;
use common::tools::{always_answer, session, tool_updates, workspace};
use common::{Setup, call, start, text, tool_results};
use hearth_testkit::agent_text;
use serde_json::{Value, json};

#[test]
fn a_read_runs_without_asking_and_its_result_reaches_the_model() {
    let setup = Setup::new(
        json!({"responses": [call("c1", "read", json!({"path": "notes.txt"})), text(&["It says hi."])]}),
    );
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("notes.txt"), "hi there\n").unwrap();
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "what does it say?")["result"]["stopReason"],
        "end_turn"
    );
    let updates = tool_updates(&client, &session);
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    assert_eq!(updates[0]["kind"], "read");
    assert_eq!(updates[0]["status"], "pending");
    assert_eq!(
        updates[0]["locations"][0]["path"],
        cwd.join("notes.txt").to_str().unwrap()
    );
    assert_eq!(updates[0]["rawInput"]["path"], "notes.txt");
    assert_eq!(final_status(&client, &session), ["completed"]);
    assert!(
        client
            .agent_requests("session/request_permission")
            .is_empty()
    );
    assert!(tool_results(&setup, 1)[0].contains("hi there"));
    assert_eq!(agent_text(&client.updates(&session)), "It says hi.");
    // The model's tool call and its result are in the context, in the right order.
    let roles: Vec<String> = setup
        .model_messages(1)
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(setup.model_messages(1)[2]["tool_calls"][0]["id"], "c1");
}

/// A command line printing a line, pausing, printing another and exiting 3, in the syntax of
/// the shell `run_command` uses here, with what it prints. cmd.exe (the shell under wine) has
/// no `;` nor `sleep`: `&&` chains, and two pings to loopback take about a second.
#[cfg(unix)]
const STREAMED: (&str, &str) = (
    "echo first; sleep 0.3; echo second; exit 3",
    "first\nsecond\n",
);
#[cfg(windows)]
const STREAMED: (&str, &str) = (
    "echo first&& ping -n 2 127.0.0.1 >NUL&& echo second&& exit 3",
    "first\r\nsecond\r\n",
);

#[test]
fn command_output_streams_as_deltas_and_ends_bounded() {
    let setup = Setup::new(json!({"responses": [
        call("c", "run_command", json!({"command": STREAMED.0})),
        text(&["exit 3 noted"]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let session = session(&mut client, &cwd);
    client.prompt(&session, "run");
    let deltas: Vec<String> = client
        .updates(&session)
        .iter()
        .filter_map(|u| {
            u.pointer("/_meta/terminal_output/data")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    assert!(deltas.len() >= 2, "output arrived in pieces: {deltas:?}");
    assert_eq!(
        deltas.concat(),
        STREAMED.1,
        "deltas, never accumulated output"
    );
    let last = tool_updates(&client, &session).last().unwrap().clone();
    assert_eq!(last["status"], "completed");
    assert_eq!(last["rawOutput"]["exitCode"], 3);
    assert!(tool_results(&setup, 1)[0].contains("second"));
}

#[test]
fn a_silent_command_is_reported_alive_while_it_runs() {
    // 3.5 s of silence, then output, then 2 s more: with a 1 s interval the client hears of
    // the call about every second of silence, never more often.
    let command = "sleep 3.5; echo half; sleep 2";
    let setup = Setup::new(json!({"responses": [
        call("c", "run_command", json!({"command": command})),
        text(&["done"]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(
        &setup,
        json!({"permissionMode": "bypass", "tools": {"livenessSecs": 1}}),
    );
    let session = session(&mut client, &cwd);
    client.prompt(&session, "run");
    let elapsed: Vec<u64> = tool_updates(&client, &session)
        .iter()
        .filter_map(|u| u.pointer("/_meta/hearth/elapsedMs").and_then(Value::as_u64))
        .collect();
    // About five; a loaded machine's late timers make fewer, never more.
    assert!(
        elapsed.len() >= 3,
        "updates through the silence: {elapsed:?}"
    );
    assert!(elapsed[0] >= 1000, "not before a second: {elapsed:?}");
    assert!(
        elapsed.windows(2).all(|w| w[1] - w[0] >= 1000),
        "at most one a second: {elapsed:?}"
    );
    let alive = tool_updates(&client, &session)
        .into_iter()
        .find(|u| u.pointer("/_meta/hearth/elapsedMs").is_some())
        .unwrap();
    assert_eq!(alive["status"], "in_progress");
    assert_eq!(final_status(&client, &session), ["completed"]);
}

#[test]
fn the_step_limit_stops_a_looping_model() {
    let looping: Vec<Value> = (0..5)
        .map(|i| call(&format!("c{i}"), "list", json!({})))
        .collect();
    let setup = Setup::new(json!({"responses": looping}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"maxTurnRequests": 3}));
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "loop")["result"]["stopReason"],
        "max_turn_requests"
    );
    assert_eq!(setup.mock.requests().len(), 3);
}

#[test]
fn tool_failures_go_back_to_the_model() {
    let setup = Setup::new(json!({"responses": [
        {"events": [
            {"toolCall": {"id": "a", "name": "no_such_tool", "arguments": "{}"}},
            {"toolCall": {"id": "b", "name": "read", "arguments": "{not json"}},
            {"toolCall": {"id": "c", "name": "edit", "arguments": json!({"path": "f.txt", "edits": [{"old_text": "zzz", "new_text": "y"}]}).to_string()}},
        ]},
        text(&["I see the errors."]),
    ]}));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("f.txt"), "abc").unwrap();
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "go")["result"]["stopReason"],
        "end_turn"
    );
    let results = tool_results(&setup, 1);
    assert_eq!(results.len(), 3);
    assert!(
        results[0].contains("no_such_tool") && results[1].contains("JSON"),
        "{results:?}"
    );
    assert!(
        results[2].to_lowercase().contains("zzz") || results[2].contains("not found"),
        "{results:?}"
    );
    assert_eq!(
        final_status(&client, &session),
        ["failed", "failed", "failed"]
    );
}

#[test]
fn a_tool_using_session_replays_as_it_was_seen() {
    let setup = Setup::new(json!({"responses": [
        call("w", "write", json!({"path": "r.txt", "content": "hello"})),
        {"events": [{"toolCall": {"id": "t", "name": "todo", "arguments": json!({"todos": [{"content": "ship", "status": "in_progress"}]}).to_string()}}]},
        text(&["Wrote it."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "accept_edits"}));
    let session = session(&mut client, &cwd);
    client.prompt(&session, "write");
    // Neither live output (`_meta`) nor the command list (state, not history) is replayed.
    let live: Vec<Value> = client
        .updates(&session)
        .into_iter()
        .filter(|u| u.get("_meta").is_none())
        .filter(|u| u["sessionUpdate"] != "available_commands_update")
        .collect();
    let mut fresh = start(&setup, json!({}));
    fresh.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    let replayed: Vec<Value> = fresh
        .updates(&session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] != "user_message_chunk")
        .collect();
    assert_eq!(
        replayed, live,
        "replay shows exactly what the client saw (chunks folded)"
    );
    assert!(replayed.iter().any(|u| u["sessionUpdate"] == "plan"));
    assert!(replayed.iter().any(|u| u["content"][0]["type"] == "diff"));
}

#[test]
fn huge_edits_are_summarised_not_shipped_whole() {
    let big = "x".repeat(600 * 1024);
    let setup = Setup::new(
        json!({"responses": [call("w", "write", json!({"path": "big.txt", "content": big})), text(&["ok"])]}),
    );
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({}));
    let asked = always_answer(&mut client, "allow_once");
    let session = session(&mut client, &cwd);
    client.prompt(&session, "write big");
    assert_eq!(
        std::fs::read_to_string(cwd.join("big.txt")).unwrap().len(),
        600 * 1024,
        "the write itself is whole"
    );
    let largest = client
        .received
        .iter()
        .map(|f| f.to_string().len())
        .max()
        .unwrap();
    assert!(
        largest < 64 * 1024,
        "no frame carries the whole file ({largest} bytes)"
    );
    let summary = asked.lock().unwrap()[0]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(summary.contains("too large"), "{summary}");
    assert_eq!(
        tool_updates(&client, &session)[0]["rawInput"]["content"],
        format!("<{} bytes>", 600 * 1024)
    );
}
