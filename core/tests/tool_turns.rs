//! Turns that use tools: the loop, permissions in every mode and outcome, "always" rules
//! across a restart, cancel in each phase with real processes, client-delegated fs and
//! terminals, the step limit, and replay.

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Setup, call, start, text, tool_results};
use hearth_testkit::{AcpClient, InProcess, agent_text};
use serde_json::{Value, json};

/// A workspace inside the setup's temp dir (the store lives beside it).
fn workspace(setup: &Setup) -> std::path::PathBuf {
    let dir = setup.dir.path().join("project");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn session(client: &mut AcpClient<InProcess>, cwd: &Path) -> String {
    client.new_session(cwd.to_str().unwrap())
}

fn tool_updates(client: &AcpClient<InProcess>, session: &str) -> Vec<Value> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update")
        .filter(|u| u.get("_meta").is_none())
        .collect()
}

fn final_status(client: &AcpClient<InProcess>, session: &str) -> Vec<String> {
    tool_updates(client, session)
        .iter()
        .filter_map(|u| u["status"].as_str())
        .filter(|s| *s == "completed" || *s == "failed")
        .map(str::to_string)
        .collect()
}

fn permission_answer(option: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option}})
}

/// Answers every permission request with `option` and counts them.
fn always_answer(
    client: &mut AcpClient<InProcess>,
    option: &'static str,
) -> Arc<Mutex<Vec<Value>>> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    client.respond_with(move |method, params| {
        (method == "session/request_permission").then(|| {
            seen.lock().unwrap().push(params.clone());
            permission_answer(option)
        })
    });
    asked
}

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

#[test]
fn an_edit_asks_with_its_diff_and_allow_once_applies_it() {
    let setup = Setup::new(json!({"responses": [
        call("e1", "edit", json!({"path": "a.txt", "edits": [{"old_text": "one", "new_text": "uno"}]})),
        text(&["Done."]),
    ]}));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("a.txt"), "one two\n").unwrap();
    let mut client = start(&setup, json!({}));
    let asked = always_answer(&mut client, "allow_once");
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "translate")["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("a.txt")).unwrap(),
        "uno two\n"
    );
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    let diff = &asked[0]["toolCall"]["content"][0];
    assert_eq!(
        (
            diff["type"].as_str(),
            diff["oldText"].as_str(),
            diff["newText"].as_str()
        ),
        (Some("diff"), Some("one two\n"), Some("uno two\n"))
    );
    let options: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(
        options,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let call = &tool_updates(&client, &session)[0];
    assert_eq!(call["kind"], "edit");
    assert_eq!(
        call["content"][0]["type"], "diff",
        "the tool call carries the diff too"
    );
    assert_eq!(final_status(&client, &session), ["completed"]);
}

#[test]
fn a_rejection_is_a_tool_error_and_the_turn_goes_on() {
    let setup = Setup::new(json!({"responses": [
        call("w1", "write", json!({"path": "new.txt", "content": "x"})),
        text(&["OK, I won't."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({}));
    always_answer(&mut client, "reject_once");
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "write it")["result"]["stopReason"],
        "end_turn"
    );
    assert!(!cwd.join("new.txt").exists());
    assert_eq!(final_status(&client, &session), ["failed"]);
    assert!(
        tool_results(&setup, 1)[0].contains("rejected"),
        "{:?}",
        tool_results(&setup, 1)
    );
    assert_eq!(agent_text(&client.updates(&session)), "OK, I won't.");
}

#[test]
fn always_answers_are_remembered_across_a_restart() {
    let write = |id: &str, file: &str| call(id, "write", json!({"path": file, "content": "x"}));
    let setup = Setup::new(json!({"responses": [
        write("a", "one.txt"), text(&["1"]),
        write("b", "two.txt"), text(&["2"]),
        call("c", "run_command", json!({"command": "echo hi"})), text(&["3"]),
        call("d", "run_command", json!({"command": "echo hi again"})), text(&["4"]),
    ]}));
    let cwd = workspace(&setup);
    {
        let mut client = start(&setup, json!({}));
        let asked = Arc::new(Mutex::new(0));
        let count = asked.clone();
        client.respond_with(move |method, params| {
            (method == "session/request_permission").then(|| {
                *count.lock().unwrap() += 1;
                let choice = if params["toolCall"]["title"]
                    .as_str()
                    .unwrap_or("")
                    .contains("echo")
                {
                    "reject_always"
                } else {
                    "allow_always"
                };
                permission_answer(choice)
            })
        });
        let session = session(&mut client, &cwd);
        client.prompt(&session, "first");
        client.prompt(&session, "second");
        client.prompt(&session, "third");
        assert_eq!(*asked.lock().unwrap(), 2, "the second write did not ask");
        assert!(cwd.join("one.txt").exists() && cwd.join("two.txt").exists());
    }
    // A new engine on the same store and workspace: the rules still hold.
    let mut client = start(&setup, json!({}));
    let asked = always_answer(&mut client, "allow_once");
    let session = session(&mut client, &cwd);
    client.prompt(&session, "fourth");
    assert!(
        asked.lock().unwrap().is_empty(),
        "the stored reject rule answered"
    );
    assert_eq!(final_status(&client, &session), ["failed"]);
}

#[test]
fn plan_mode_refuses_edits_and_commands_without_asking() {
    let setup = Setup::new(json!({"responses": [
        call("w", "write", json!({"path": "x.txt", "content": "x"})),
        call("r", "run_command", json!({"command": "touch y.txt"})),
        text(&["I'll describe it instead."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "plan"}));
    let asked = always_answer(&mut client, "allow_once");
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "do it")["result"]["stopReason"],
        "end_turn"
    );
    assert!(asked.lock().unwrap().is_empty());
    assert!(!cwd.join("x.txt").exists() && !cwd.join("y.txt").exists());
    assert_eq!(final_status(&client, &session), ["failed", "failed"]);
    assert!(tool_results(&setup, 1)[0].contains("Plan mode"));
}

#[test]
fn accept_edits_edits_inside_but_asks_outside_and_for_commands() {
    let setup = Setup::new(json!({"responses": [
        call("in", "write", json!({"path": "inside.txt", "content": "x"})),
        call("out", "write", json!({"path": "../outside.txt", "content": "x"})),
        call("cmd", "run_command", json!({"command": "echo hi"})),
        text(&["done"]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "accept_edits"}));
    let asked = always_answer(&mut client, "reject_once");
    let session = session(&mut client, &cwd);
    client.prompt(&session, "go");
    assert!(cwd.join("inside.txt").exists());
    assert!(!setup.dir.path().join("outside.txt").exists());
    let asked = asked.lock().unwrap();
    assert_eq!(
        asked.len(),
        2,
        "outside the workspace and the command asked"
    );
    let outside_options: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        outside_options,
        ["allow_once", "reject_once"],
        "no 'always' for a path outside the workspace"
    );
}

#[test]
fn bypass_runs_everything_but_still_asks_outside_the_workspace() {
    let setup = Setup::new(json!({"responses": [
        call("cmd", "run_command", json!({"command": "echo bypassed > made.txt"})),
        call("out", "write", json!({"path": "../escape.txt", "content": "x"})),
        text(&["done"]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let asked = always_answer(&mut client, "reject_once");
    let session = session(&mut client, &cwd);
    client.prompt(&session, "go");
    assert_eq!(
        std::fs::read_to_string(cwd.join("made.txt"))
            .unwrap()
            .trim(),
        "bypassed"
    );
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert!(!setup.dir.path().join("escape.txt").exists());
}

#[test]
fn dangerous_commands_ask_even_with_an_allow_rule() {
    let setup = Setup::new(json!({"responses": [
        call("a", "run_command", json!({"command": "sudo true"})),
        text(&["ok"]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "accept_edits"}));
    let asked = always_answer(&mut client, "reject_once");
    let session = session(&mut client, &cwd);
    client.prompt(&session, "go");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0]["options"].as_array().unwrap().len(),
        2,
        "no 'always' for a dangerous command"
    );
}

#[test]
fn command_output_streams_as_deltas_and_ends_bounded() {
    let setup = Setup::new(json!({"responses": [
        call("c", "run_command", json!({"command": "echo first; sleep 0.3; echo second; exit 3"})),
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
        "first\nsecond\n",
        "deltas, never accumulated output"
    );
    let last = tool_updates(&client, &session).last().unwrap().clone();
    assert_eq!(last["status"], "completed");
    assert_eq!(last["rawOutput"]["exitCode"], 3);
    assert!(tool_results(&setup, 1)[0].contains("second"));
}

fn process_gone(marker: &str) -> bool {
    let out = std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .unwrap();
    out.stdout.is_empty()
}

#[test]
fn cancel_while_a_command_runs_kills_its_process_tree() {
    let marker = format!("sleep 7{}", std::process::id() % 1000);
    let command = format!("{marker} & {marker}; echo never");
    let setup = Setup::new(
        json!({"responses": [call("c", "run_command", json!({"command": command})), text(&["unused"])]}),
    );
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let session = session(&mut client, &cwd);
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    client
        .wait_for(Duration::from_secs(10), |f| {
            f["params"]["update"]["status"] == "in_progress"
        })
        .expect("running");
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_gone(&marker) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!process_gone(&marker), "the command started");
    client.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    assert!(
        process_gone(&marker),
        "no process of the tree survives the cancel"
    );
    assert_eq!(
        final_status(&client, &session),
        ["failed"],
        "the open tool call got a final status"
    );
    // The next prompt works and its context is valid (the call has a result).
    client.respond_with(|_, _| None);
}

#[test]
fn cancel_while_permission_is_pending_answers_cancelled() {
    let setup = Setup::new(
        json!({"responses": [call("w", "write", json!({"path": "x.txt", "content": "x"})), text(&["after"])]}),
    );
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    let request = client
        .wait_for(Duration::from_secs(10), |f| {
            f["method"] == "session/request_permission"
        })
        .expect("asked");
    client.notify("session/cancel", json!({"sessionId": session}));
    // The client answers its pending permission request as cancelled, as the spec requires.
    client.answer(&request, json!({"outcome": {"outcome": "cancelled"}}));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    assert!(!cwd.join("x.txt").exists());
    assert_eq!(final_status(&client, &session), ["failed"]);
    // The conversation stays valid: the next turn's context carries a result for the call.
    assert_eq!(
        client.prompt(&session, "again")["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(tool_results(&setup, 1).len(), 1);
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
fn the_client_serves_files_when_it_advertised_fs() {
    let setup = Setup::new(json!({"responses": [
        call("r", "read", json!({"path": "buf.txt"})),
        call("w", "write", json!({"path": "buf.txt", "content": "saved by the editor"})),
        text(&["ok"]),
    ]}));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("buf.txt"), "on disk").unwrap();
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["permissionMode"] = json!("accept_edits");
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}));
    let written = Arc::new(Mutex::new(Vec::new()));
    let log = written.clone();
    client.respond_with(move |method, params| match method {
        "fs/read_text_file" => Some(json!({"content": "unsaved buffer text"})),
        "fs/write_text_file" => {
            log.lock().unwrap().push(params.clone());
            Some(json!({}))
        }
        _ => None,
    });
    let session = session(&mut client, &cwd);
    client.prompt(&session, "go");
    assert!(
        tool_results(&setup, 1)[0].contains("unsaved buffer text"),
        "the model saw the editor's buffer"
    );
    assert_eq!(written.lock().unwrap()[0]["content"], "saved by the editor");
    assert_eq!(
        std::fs::read_to_string(cwd.join("buf.txt")).unwrap(),
        "on disk",
        "the editor writes, not Hearth"
    );
    assert!(client.agent_requests("terminal/create").is_empty());
}

#[test]
fn without_fs_capabilities_the_client_is_never_asked_for_files() {
    let setup = Setup::new(
        json!({"responses": [call("r", "read", json!({"path": "f.txt"})), text(&["ok"])]}),
    );
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("f.txt"), "local").unwrap();
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    client.prompt(&session, "go");
    assert!(client.agent_requests("fs/read_text_file").is_empty());
    assert!(tool_results(&setup, 1)[0].contains("local"));
}

#[test]
fn commands_run_in_the_client_terminal_when_it_has_one() {
    let setup = Setup::new(
        json!({"responses": [call("c", "run_command", json!({"command": "make test"})), text(&["ok"])]}),
    );
    let cwd = workspace(&setup);
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["permissionMode"] = json!("bypass");
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"terminal": true}}),
    );
    let calls = Arc::new(Mutex::new(Vec::new()));
    let log = calls.clone();
    client.respond_with(move |method, params| {
        log.lock().unwrap().push((method.to_string(), params.clone()));
        match method {
            "terminal/create" => Some(json!({"terminalId": "term-1"})),
            "terminal/output" => Some(json!({"output": "all tests passed\n", "truncated": false, "exitStatus": {"exitCode": 0}})),
            "terminal/wait_for_exit" => Some(json!({"exitCode": 0})),
            "terminal/kill" | "terminal/release" => Some(json!({})),
            _ => None,
        }
    });
    let session = session(&mut client, &cwd);
    client.prompt(&session, "test");
    let methods: Vec<String> = calls
        .lock()
        .unwrap()
        .iter()
        .map(|(m, _)| m.clone())
        .collect();
    assert_eq!(methods.first().map(String::as_str), Some("terminal/create"));
    assert_eq!(
        methods.last().map(String::as_str),
        Some("terminal/release"),
        "{methods:?}"
    );
    let create = &calls.lock().unwrap()[0].1;
    assert_eq!(create["sessionId"], session.as_str());
    let last = tool_updates(&client, &session).last().unwrap().clone();
    assert_eq!(
        last["content"][0],
        json!({"type": "terminal", "terminalId": "term-1"})
    );
    assert!(tool_results(&setup, 1)[0].contains("all tests passed"));
}

#[test]
fn anthropic_thinking_round_trips_with_its_signature_inside_a_tool_loop() {
    let setup = Setup::new(json!({"responses": [
        {"events": [
            {"reasoning": "Let me look.", "signature": "sig-abc"},
            {"redactedThinking": "opaque-blob"},
            {"toolCall": {"id": "toolu_1", "name": "list", "arguments": "{}"}},
        ]},
        {"events": [{"text": "Found it."}]},
    ]}));
    let cwd = workspace(&setup);
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["model"] = json!("claude-test");
    config["providers"]["anthropic"] =
        json!({"baseUrl": setup.mock.base_url(), "apiKey": "anthropic-test-key", "maxRetries": 0});
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.initialize();
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "look around")["result"]["stopReason"],
        "end_turn"
    );
    let requests = setup.mock.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].headers["x-api-key"], "anthropic-test-key");
    assert_eq!(
        requests[0].body["thinking"]["type"], "enabled",
        "claude models think at the default level"
    );
    let assistant = &requests[1].body["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    let blocks = assistant["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "thinking");
    assert_eq!(blocks[0]["thinking"], "Let me look.");
    assert_eq!(blocks[0]["signature"], "sig-abc");
    assert_eq!(
        blocks[1],
        json!({"type": "redacted_thinking", "data": "opaque-blob"})
    );
    assert_eq!(blocks[2]["type"], "tool_use");
    assert_eq!(blocks[2]["id"], "toolu_1");
    let results = &requests[1].body["messages"][2];
    assert_eq!(results["content"][0]["type"], "tool_result");
    assert_eq!(results["content"][0]["tool_use_id"], "toolu_1");
    let thoughts = hearth_testkit::chunk_text(&client.updates(&session), "agent_thought_chunk");
    assert_eq!(thoughts, "Let me look.");
}

#[test]
fn rate_limits_and_server_errors_are_retried_before_anything_streams() {
    let setup = Setup::new(json!({"responses": [
        {"status": 429, "headers": {"retry-after": "0"}, "error": "slow down"},
        {"status": 500, "error": "oops"},
        text(&["made it"]),
    ]}));
    let cwd = workspace(&setup);
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["providers"]["openai"]["maxRetries"] = json!(3);
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.initialize();
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "hi")["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(agent_text(&client.updates(&session)), "made it");
    assert_eq!(setup.mock.requests().len(), 3);
}

#[test]
fn cancel_while_a_client_fs_request_is_pending_withdraws_it() {
    let setup = Setup::new(
        json!({"responses": [call("r", "read", json!({"path": "slow.txt"})), text(&["after"])]}),
    );
    let cwd = workspace(&setup);
    let mut client = AcpClient::new(InProcess::start(&setup.config()));
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}}}),
    );
    let session = session(&mut client, &cwd);
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    let read = client
        .wait_for(Duration::from_secs(10), |f| {
            f["method"] == "fs/read_text_file"
        })
        .expect("the agent asked the editor");
    client.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    let withdrawn = client
        .received
        .iter()
        .any(|f| f["method"] == "$/cancel_request" && f["params"]["requestId"] == read["id"]);
    assert!(
        withdrawn,
        "the pending fs request was withdrawn with $/cancel_request"
    );
    assert_eq!(final_status(&client, &session), ["failed"]);
    // The late answer is harmless.
    client.answer(&read, json!({"content": "too late"}));
    assert_eq!(
        client.prompt(&session, "again")["result"]["stopReason"],
        "end_turn"
    );
}

#[test]
fn usage_is_reported_against_the_context_window_and_replayed() {
    let setup = Setup::new(
        json!({"responses": [{"events": [{"text": "hi"}, {"usage": {"input": 1200, "output": 34}}]}]}),
    );
    let cwd = workspace(&setup);
    let mut client = start(
        &setup,
        json!({"models": [{"id": "mock-model", "contextWindow": 32000}]}),
    );
    let session = session(&mut client, &cwd);
    client.prompt(&session, "hello");
    let usage: Vec<Value> = client
        .updates(&session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .collect();
    // The request's own counts ride along (nothing cached: the mock reports none).
    let counts = json!({"inputTokens": 1200, "outputTokens": 34, "cachedReadTokens": 0, "cachedWriteTokens": 0});
    assert_eq!(
        usage,
        [
            json!({"sessionUpdate": "usage_update", "used": 1234, "size": 32000, "_meta": {"hearth": counts}})
        ]
    );
    let mut fresh = start(&setup, json!({}));
    fresh.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    assert!(fresh.updates(&session).contains(&usage[0]));
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
