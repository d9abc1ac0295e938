//! What the providers bring to a tool turn, end to end: Anthropic's signed thinking kept
//! through a tool loop, retries of rate limits and server errors before anything streams,
//! usage reported against the model's context window (and replayed), and a tool loop's
//! requests on one HTTP/1.1 connection.

mod common;

use common::tools::{session, workspace};
use common::{Setup, call, start, text};
use hearth_testkit::{AcpClient, InProcess, agent_text};
use serde_json::{Value, json};

/// An engine on `model`, initialized, with the mock serving Anthropic's API too (the key the
/// first test checks) and `mode` as its permission mode.
fn on_model(setup: &Setup, model: &str, mode: &str) -> AcpClient<InProcess> {
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["model"] = json!(model);
    config["permissionMode"] = json!(mode);
    config["providers"]["anthropic"] =
        json!({"baseUrl": setup.mock.base_url(), "apiKey": "anthropic-test-key", "maxRetries": 0});
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.initialize();
    client
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
    let mut client = on_model(&setup, "claude-test", "ask");
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

/// Each step's request goes on the connection the previous answer came on, for both
/// providers: the engine reads an answer's body to its end (the last chunk after `[DONE]` or
/// `message_stop`), so the connection goes back to the pool rather than being closed — a new
/// connection per step would be a TLS handshake per step with a remote HTTP/1.1 server. (The
/// client puts a connection back a moment after its answer ends, and connects anew if that
/// moment has not come by the next request — on loopback, at once: the tool here takes a
/// fifth of a second, as a real tool call would, so that the moment always has come.)
#[test]
fn a_tool_loop_reuses_one_connection() {
    for model in ["mock-model", "claude-test"] {
        let sleep = || call("c", "run_command", json!({"command": "sleep 0.2"}));
        let setup = Setup::new(json!({"responses": [sleep(), sleep(), sleep(), text(&["done"])]}));
        let cwd = workspace(&setup);
        let mut client = on_model(&setup, model, "bypass");
        let session = session(&mut client, &cwd);
        assert_eq!(
            client.prompt(&session, "look")["result"]["stopReason"],
            "end_turn"
        );
        let connections: Vec<u64> = setup.mock.requests().iter().map(|r| r.connection).collect();
        assert_eq!(connections, [1, 1, 1, 1], "{model}");
    }
}
