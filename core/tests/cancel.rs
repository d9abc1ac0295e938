//! `session/cancel` in each phase of a tool call, with real processes: while a command runs
//! (its process tree is killed), while a permission request is pending, and while a request
//! to the client's file system is pending (it is withdrawn).

mod common;

use std::time::Duration;

use common::final_status;
use common::tools::{cancel_while_asked, session, workspace};
use common::{Setup, call, start, text, tool_results};
use hearth_testkit::processes::{marked_gone, marked_started};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::json;

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
    assert!(
        marked_started(&marker, Duration::from_secs(5)),
        "the command started"
    );
    client.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    assert!(
        marked_gone(&marker),
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
    let read = cancel_while_asked(&mut client, &session, "fs/read_text_file");
    assert_eq!(final_status(&client, &session), ["failed"]);
    // The late answer is harmless.
    client.answer(&read, json!({"content": "too late"}));
    assert_eq!(
        client.prompt(&session, "again")["result"]["stopReason"],
        "end_turn"
    );
}
