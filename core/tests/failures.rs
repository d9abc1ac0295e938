//! Typed provider failures end to end: a scripted 401, 402, 429 and 529 each fail the prompt
//! with its category (and reset time where the provider gave one) in the error's `data`, are
//! told the user — a line of agent message, an error `notice`, or JetBrains' `sessionFailure`,
//! as the client can show — and leave the session usable for the next prompt.

mod common;

use std::time::{Duration, SystemTime};

use common::{Setup, config, text, updates_of};
use hearth_testkit::{AcpClient, InProcess, agent_text};
use serde_json::{Value, json};

/// A client initialized with `capabilities`, on `setup` with `extra` config, and its session.
fn connect(setup: &Setup, extra: Value, capabilities: Value) -> (AcpClient<InProcess>, String) {
    let mut client = AcpClient::new(InProcess::start(&config(setup, extra)));
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
    );
    let session = client.new_session(&setup.cwd());
    (client, session)
}

/// The Anthropic provider on the setup's mock, as the session's model.
fn on_anthropic(setup: &Setup, max_retries: u32) -> Value {
    json!({
        "model": "claude-test",
        "providers": {"anthropic": {"baseUrl": setup.mock.base_url(), "apiKey": "k", "maxRetries": max_retries}},
    })
}

/// What a fresh engine replays of `session`.
fn replayed(setup: &Setup, session: &str, capabilities: Value) -> Vec<Value> {
    let (mut fresh, _) = connect(setup, json!({}), capabilities);
    fresh.call(
        "session/load",
        json!({"sessionId": session, "cwd": setup.cwd(), "mcpServers": []}),
    );
    fresh.updates(session)
}

/// The next prompt of `session` is answered by the model: the failure left it usable.
fn still_usable(client: &mut AcpClient<InProcess>, session: &str) {
    let response = client.prompt(session, "again");
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(agent_text(&client.updates(session)).ends_with("Back."));
}

#[test]
fn a_refused_key_is_authentication_told_as_a_message_line_without_notices() {
    let setup = Setup::new(json!({"responses": [
        {"status": 401, "error": "Incorrect API key provided"},
        text(&["Back."]),
    ]}));
    let (mut client, session) = connect(&setup, json!({}), json!({}));
    let error = &client.prompt(&session, "hi")["error"];
    assert_eq!(error["code"], -32000, "ACP's authentication required");
    assert_eq!(
        error["data"],
        json!({"category": "authentication", "provider": "openai", "status": 401, "message": "Incorrect API key provided"})
    );
    let told = agent_text(&client.updates(&session));
    assert!(
        told.starts_with("**The model provider refused the credentials:** openai (HTTP 401): Incorrect API key provided."),
        "{told}"
    );
    assert!(told.contains("hearth auth"), "{told}");
    still_usable(&mut client, &session);
    // The line is the answer the prompt got: the replay shows it in its place.
    let replay = agent_text(&replayed(&setup, &session, json!({})));
    assert_eq!(replay, format!("{told}Back."));
}

#[test]
fn an_exhausted_quota_is_an_error_notice_for_a_client_with_notices() {
    let setup = Setup::new(json!({"responses": [
        {"status": 402, "error": "Payment required"},
        {"status": 429, "error": "You exceeded your current quota, please check your plan and billing details."},
        text(&["Back."]),
    ]}));
    let notices = json!({"session": {"notices": {}}});
    let (mut client, session) = connect(&setup, json!({}), notices);
    for status in [402, 429] {
        let error = client.prompt(&session, "hi")["error"].clone();
        assert_eq!(error["code"], -32603);
        assert_eq!(error["data"]["category"], "quota", "{status}: {error}");
        assert_eq!(error["data"]["status"], status);
    }
    let notices = updates_of(&client, &session, "notice");
    assert_eq!(notices.len(), 2);
    assert_eq!(notices[0]["severity"], "error");
    assert_eq!(notices[0]["title"], "The model provider's quota is used up");
    assert_eq!(
        notices[0]["_meta"]["hearth"]["failure"]["category"],
        "quota"
    );
    assert_eq!(
        agent_text(&client.updates(&session)),
        "",
        "no message stand-in"
    );
    still_usable(&mut client, &session);
}

#[test]
fn a_rate_limit_carries_its_reset_time_from_retry_after() {
    let setup = Setup::new(json!({"responses": [
        {"status": 429, "headers": {"retry-after": "120"}, "error": "Rate limit reached"},
        text(&["Back."]),
    ]}));
    let (mut client, session) = connect(&setup, json!({}), json!({}));
    let before = SystemTime::now();
    let error = client.prompt(&session, "hi")["error"].clone();
    let after = SystemTime::now();
    assert_eq!(error["data"]["category"], "rate_limit");
    let reset = humantime::parse_rfc3339(error["data"]["resetAt"].as_str().unwrap()).unwrap();
    // The reset is 120 s after the answer, which came between `before` and `after` (the
    // RFC 3339 form is to the second).
    assert!(reset + Duration::from_secs(1) >= before + Duration::from_secs(120));
    assert!(reset <= after + Duration::from_secs(120));
    let told = agent_text(&client.updates(&session));
    assert!(
        told.contains(&format!(
            "It resets at {}.",
            error["data"]["resetAt"].as_str().unwrap()
        )),
        "{told}"
    );
    still_usable(&mut client, &session);
}

#[test]
fn an_anthropic_rate_limit_reads_its_reset_header() {
    let setup = Setup::new(json!({"responses": [
        {"status": 429, "headers": {"anthropic-ratelimit-tokens-reset": "2031-05-01T12:00:30Z"}, "error": "Number of request tokens has exceeded your per-minute rate limit"},
        text(&["Back."]),
    ]}));
    let (mut client, session) = connect(&setup, on_anthropic(&setup, 0), json!({}));
    let error = client.prompt(&session, "hi")["error"].clone();
    assert_eq!(
        error["data"],
        json!({
            "category": "rate_limit",
            "provider": "anthropic",
            "status": 429,
            "message": "Number of request tokens has exceeded your per-minute rate limit",
            "resetAt": "2031-05-01T12:00:30Z",
        })
    );
    still_usable(&mut client, &session);
}

#[test]
fn overloaded_after_the_retries_is_a_jetbrains_session_failure() {
    let setup = Setup::new(json!({"responses": [
        {"status": 529, "error": "Overloaded"},
        {"status": 529, "error": "Overloaded"},
        text(&["Back."]),
    ]}));
    let air = json!({"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["sessionFailure"]}}}});
    let (mut client, session) = connect(&setup, on_anthropic(&setup, 1), air);
    let error = client.prompt(&session, "hi")["error"].clone();
    assert_eq!(
        setup.mock.requests().len(),
        2,
        "classified after its one retry"
    );
    assert_eq!(error["data"]["category"], "overloaded");
    assert_eq!(error["data"]["status"], 529);
    let infos = updates_of(&client, &session, "session_info_update");
    let failure = infos
        .iter()
        .find_map(|u| u.pointer("/_meta/jetbrains/air/sessionFailure"))
        .expect("a sessionFailure");
    assert_eq!(failure["category"], "service");
    assert_eq!(failure["severity"], "error");
    assert_eq!(failure["actions"], json!(["retry"]));
    assert_eq!(failure["title"], "The model provider is overloaded");
    assert!(failure["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(updates_of(&client, &session, "notice").is_empty());
    assert_eq!(agent_text(&client.updates(&session)), "");
    still_usable(&mut client, &session);
}

#[test]
fn a_malformed_air_declaration_enables_nothing() {
    let setup = Setup::new(json!({"responses": [{"status": 529, "error": "Overloaded"}]}));
    let air = json!({"_meta": {"jetbrains": {"air": {"version": 0, "capabilities": ["sessionFailure"]}}}});
    let (mut client, session) = connect(&setup, on_anthropic(&setup, 0), air);
    client.prompt(&session, "hi");
    assert!(
        agent_text(&client.updates(&session)).starts_with("**The model provider is overloaded:**")
    );
}
