//! Usage as a client sees it: the turn's token totals in the prompt response's unstable
//! `usage` (summed over its model requests, as their `usage_update`s reported them, reasoning
//! tokens as `thoughtTokens` when the provider counts them apart), none for a command, and
//! `/context` telling where the context goes.

mod common;

use common::tools::{session, workspace};
use common::{Setup, call, start};
use hearth_testkit::agent_text;
use serde_json::json;

#[test]
fn the_prompt_response_carries_the_turns_token_totals() {
    let setup = Setup::new(json!({"responses": [
        {"events": [
            {"toolCall": {"id": "c1", "name": "list", "arguments": "{}"}},
            {"usage": {"input": 1000, "output": 20, "cacheRead": 200}},
        ]},
        {"events": [{"text": "Done."}, {"usage": {"input": 300, "output": 7, "cacheRead": 1200}}]},
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    let result = client.prompt(&session, "look")["result"].clone();
    assert_eq!(result["stopReason"], "end_turn");
    assert_eq!(
        result["usage"],
        json!({
            "totalTokens": 2727,
            "inputTokens": 2700,
            "outputTokens": 27,
            "cachedReadTokens": 1400,
            "cachedWriteTokens": 0,
        })
    );
    let reported: u64 = client
        .updates(&session)
        .iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .map(|u| u["_meta"]["hearth"]["outputTokens"].as_u64().unwrap())
        .sum();
    assert_eq!(reported, 27, "the totals are what the usage updates said");
}

#[test]
fn reasoning_tokens_reach_the_client_as_thought_tokens() {
    let setup = Setup::new(json!({"responses": [
        {"events": [
            {"toolCall": {"id": "c1", "name": "list", "arguments": "{}"}},
            {"usage": {"input": 100, "output": 40, "thoughts": 30}},
        ]},
        // A request whose server gives no breakdown still counts toward the turn's total.
        {"events": [{"text": "Done."}, {"usage": {"input": 150, "output": 9}}]},
        {"events": [{"text": "Plain."}, {"usage": {"input": 160, "output": 2}}]},
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    let result = client.prompt(&session, "look")["result"].clone();
    assert_eq!(result["usage"]["thoughtTokens"], 30, "{result}");
    assert_eq!(result["usage"]["outputTokens"], 49);
    let thoughts: Vec<Option<u64>> = client
        .updates(&session)
        .iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .map(|u| u["_meta"]["hearth"]["thoughtTokens"].as_u64())
        .collect();
    assert_eq!(thoughts, [Some(30), None]);
    // No request of the turn said: no figure, rather than a made-up 0.
    let result = client.prompt(&session, "again")["result"].clone();
    assert!(result["usage"].get("thoughtTokens").is_none(), "{result}");
}

#[test]
fn claudes_thinking_tokens_are_thought_tokens_too() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"reasoning": "Hm."}, {"text": "Yes."}, {"usage": {"input": 10, "output": 50, "thoughts": 45}}]},
    ]}));
    let cwd = workspace(&setup);
    let claude = json!({
        "model": "claude-test",
        "providers": {"anthropic": {"baseUrl": setup.mock.base_url(), "apiKey": "k", "maxRetries": 0}},
    });
    let mut client = start(&setup, claude);
    let session = session(&mut client, &cwd);
    let result = client.prompt(&session, "think")["result"].clone();
    assert_eq!(result["usage"]["thoughtTokens"], 45, "{result}");
}

#[test]
fn a_command_asks_no_model_and_reports_no_usage() {
    let setup = Setup::new(json!({"responses": []}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    let result = client.prompt(&session, "/help")["result"].clone();
    assert_eq!(result["stopReason"], "end_turn");
    assert!(result.get("usage").is_none(), "{result}");
}

#[test]
fn context_shows_the_system_prompt_tools_messages_and_what_compact_would_free() {
    let big: String = (0..400)
        .map(|i| format!("line {i} of the big file\n"))
        .collect();
    let setup = Setup::new(json!({"responses": [
        call("c1", "read", json!({"path": "big.txt"})),
        call("c2", "read", json!({"path": "small.txt"})),
        call("c3", "read", json!({"path": "small.txt"})),
        call("c4", "read", json!({"path": "small.txt"})),
        {"events": [{"text": "Read them."}, {"usage": {"input": 3000, "output": 10}}]},
    ]}));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("big.txt"), &big).unwrap();
    std::fs::write(cwd.join("small.txt"), "tiny").unwrap();
    let mut client = start(
        &setup,
        json!({"models": [{"id": "mock-model", "contextWindow": 100000}]}),
    );
    let session = session(&mut client, &cwd);
    client.respond_with(|method, _| {
        (method == "session/request_permission")
            .then(|| json!({"outcome": {"outcome": "selected", "optionId": "allow_always"}}))
    });
    client.prompt(&session, "read the files");
    let before = agent_text(&client.updates(&session));
    let result = client.prompt(&session, "/context")["result"].clone();
    assert_eq!(result["stopReason"], "end_turn");
    assert_eq!(
        setup.mock.requests().len(),
        5,
        "no model request for /context"
    );
    let answer = agent_text(&client.updates(&session))[before.len()..].to_string();
    let lines: Vec<&str> = answer.lines().collect();
    assert_eq!(
        lines[0], "Context of `mock-model`: about 3002 of 100000 tokens (3%).",
        "{answer}"
    );
    assert!(lines[2].starts_with("- System prompt: "), "{answer}");
    assert!(
        lines[3].starts_with("- Tools, built-in: 14 tools, "),
        "{answer}"
    );
    assert!(
        lines[4].starts_with("- Messages: 10 messages, "),
        "{answer}"
    );
    // The big read is old enough to clear (the newest three results stay).
    let cleared = lines[6]
        .strip_prefix("`/compact` would clear the output of 1 earlier tool calls (about ")
        .and_then(|rest| rest.split_once(' '))
        .and_then(|(n, _)| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(cleared > 2000, "the big file's lines: {answer}");
}

#[test]
fn a_priced_model_reports_what_the_session_spent() {
    let setup = Setup::new(json!({"responses": [
        {"events": [
            {"toolCall": {"id": "c1", "name": "list", "arguments": "{}"}},
            {"usage": {"input": 1_000_000, "output": 10_000}},
        ]},
        {"events": [{"text": "Done."}, {"usage": {"input": 100_000, "output": 20_000, "cacheRead": 1_000_000}}]},
    ]}));
    let cwd = workspace(&setup);
    let price = json!({"input": 2.0, "output": 10.0, "cacheRead": 0.5, "currency": "EUR"});
    let mut client = start(
        &setup,
        json!({"models": [{"id": "mock-model", "contextWindow": 10_000_000, "price": price}]}),
    );
    let session = session(&mut client, &cwd);
    client.prompt(&session, "look");
    let costs: Vec<_> = client
        .updates(&session)
        .iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .map(|u| u["cost"].clone())
        .collect();
    // 1M in at 2 + 10k out at 10; then 100k in at 2, 20k out at 10 and 1M cached at 0.5.
    assert_eq!(
        costs,
        [
            json!({"amount": 2.1, "currency": "EUR"}),
            json!({"amount": 3.0, "currency": "EUR"}),
        ]
    );
    let before = agent_text(&client.updates(&session)).len();
    client.prompt(&session, "/context");
    let answer = agent_text(&client.updates(&session))[before..].to_string();
    assert!(
        answer.contains("- Spent by this session: 3.0000 EUR"),
        "{answer}"
    );
}

/// The running cost outlives the engine: a session loaded by a fresh engine on the same
/// store file goes on from what it had spent (read back from its last `usage_update`).
#[test]
fn a_restarted_engine_continues_the_sessions_running_cost() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"text": "One."}, {"usage": {"input": 1_000_000, "output": 0}}]},
        {"events": [{"text": "Two."}, {"usage": {"input": 500_000, "output": 0}}]},
    ]}));
    let cwd = workspace(&setup);
    let price = json!({"input": 2.0, "output": 10.0});
    let config =
        json!({"models": [{"id": "mock-model", "contextWindow": 10_000_000, "price": price}]});
    let mut client = start(&setup, config.clone());
    let session = session(&mut client, &cwd);
    client.prompt(&session, "first");
    drop(client);
    assert!(
        setup.dir.path().join("hearth.db").exists(),
        "a real file store"
    );

    let mut fresh = start(&setup, config);
    fresh.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    fresh.prompt(&session, "second");
    let last = fresh
        .updates(&session)
        .iter()
        .rev()
        .find(|u| u["sessionUpdate"] == "usage_update")
        .map(|u| u["cost"].clone())
        .unwrap();
    assert_eq!(
        last,
        json!({"amount": 3.0, "currency": "USD"}),
        "2 before, 1 now"
    );
}
