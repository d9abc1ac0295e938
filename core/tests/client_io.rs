//! Tools served by the client: `fs/*` when it advertised them (and never otherwise), and
//! `run_command` in the client's terminal when it has one.

mod common;

use std::sync::{Arc, Mutex};

use common::tools::{session, tool_updates, workspace};
use common::{Setup, call, start, text, tool_results};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

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

/// With the sandbox off (the user's choice), as before it: the client's terminal runs it.
/// While the sandbox confines commands they never go there (`sandbox_escalation.rs`).
#[test]
fn commands_run_in_the_client_terminal_when_it_has_one_and_the_sandbox_is_off() {
    let setup = Setup::new(
        json!({"responses": [call("c", "run_command", json!({"command": "make test"})), text(&["ok"])]}),
    );
    let cwd = workspace(&setup);
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["permissionMode"] = json!("bypass");
    config["sandbox"] = json!({"mode": "off"});
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
