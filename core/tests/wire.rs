//! The wire is the connection's, chosen at `initialize`: what a client is shown follows the
//! capabilities of its latest `initialize`.

mod common;

use std::time::Duration;

use common::Setup;
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

fn initialize(client: &mut AcpClient<InProcess>, session_caps: Value) {
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"session": session_caps}}),
    );
}

/// Opens a session whose one MCP server cannot start, and returns how its failure was told.
fn failure_report(client: &mut AcpClient<InProcess>, cwd: &str) -> Value {
    let servers =
        json!([{"name": "missing", "command": "/nonexistent/mcp-server", "args": [], "env": []}]);
    let result = client.call("session/new", json!({"cwd": cwd, "mcpServers": servers}));
    let session = result["sessionId"].clone();
    let report = client.wait_for(Duration::from_secs(10), |f| {
        let update = &f["params"]["update"];
        f["params"]["sessionId"] == session
            && (update["sessionUpdate"] == "notice" || update["kind"] == "other")
    });
    report.expect("the failure is reported")["params"]["update"].clone()
}

#[test]
fn a_second_initialize_changes_what_the_client_is_shown() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = AcpClient::new(InProcess::start(&setup.config()));
    initialize(&mut client, json!({}));
    let before = failure_report(&mut client, &setup.cwd());
    assert_eq!(before["sessionUpdate"], "tool_call", "{before}");
    assert_eq!(before["status"], "failed", "{before}");

    initialize(&mut client, json!({"notices": {}}));
    let after = failure_report(&mut client, &setup.cwd());
    assert_eq!(after["sessionUpdate"], "notice", "{after}");
    assert!(
        after["title"].as_str().unwrap().contains("missing"),
        "{after}"
    );
}
