//! Prompt turns: streaming, stop reasons, cancel, queueing, context from the log, provider
//! failures.

mod common;

use std::time::{Duration, Instant};

use common::{Setup, start, text};
use hearth_testkit::{absolute, agent_text, chunk_text};
use serde_json::json;

#[test]
fn a_silent_model_is_reported_alive_before_its_first_byte_and_in_a_stall() {
    // 2.5 s before the response starts, then a 2.2 s stall between two deltas.
    let setup = Setup::new(json!({"responses": [{
        "delayMs": 2500,
        "events": [{"text": "a"}, {"stallMs": 2200}, {"text": "b"}],
    }]}));
    let mut client = start(&setup, json!({"tools": {"livenessSecs": 1}}));
    let session = client.new_session(&setup.cwd());
    let response = client.prompt(&session, "take your time");
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let updates = client.updates(&session);
    assert_eq!(agent_text(&updates), "ab");
    let beats: Vec<&serde_json::Value> = updates
        .iter()
        .filter(|u| u.pointer("/_meta/hearth/waitingForModelMs").is_some())
        .collect();
    // About two in each wait; late timers on a loaded machine make fewer, never more.
    assert!(beats.len() >= 2, "{beats:?}");
    for beat in &beats {
        assert_eq!(beat["sessionUpdate"], "session_info_update");
        assert!(beat["updatedAt"].is_string(), "{beat}");
        assert!(beat.get("title").is_none(), "no title change: {beat}");
        assert!(
            beat["_meta"]["hearth"]["waitingForModelMs"]
                .as_u64()
                .unwrap()
                >= 1000
        );
    }
    let first_text = updates
        .iter()
        .position(|u| u["sessionUpdate"] == "agent_message_chunk")
        .unwrap();
    let before = updates[..first_text]
        .iter()
        .filter(|u| u.pointer("/_meta/hearth/waitingForModelMs").is_some())
        .count();
    assert!(before >= 1, "a beat before the first byte");
}

#[test]
fn streams_chunks_thoughts_and_a_title_then_end_turn() {
    let setup = Setup::new(json!({"responses": [{"events": [
        {"reasoning": "Let me think."}, {"text": "Hello"}, {"text": ", "}, {"text": "world"}
    ]}]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let response = client.prompt(&session, "Say hello\nto everyone");
    assert_eq!(response["result"]["stopReason"], "end_turn");

    let updates = client.updates(&session);
    assert_eq!(agent_text(&updates), "Hello, world");
    assert_eq!(chunk_text(&updates, "agent_thought_chunk"), "Let me think.");
    let message_ids: Vec<_> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["messageId"].clone())
        .collect();
    assert!(
        message_ids
            .iter()
            .all(|id| id.is_string() && *id == message_ids[0]),
        "{message_ids:?}"
    );
    let infos: Vec<_> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .collect();
    assert_eq!(infos.len(), 1);
    assert_eq!(infos[0]["title"], "Say hello");

    // The prompt response comes after every update of the turn.
    let last = client.received.last().unwrap();
    assert_eq!(last["result"]["stopReason"], "end_turn");
}

#[test]
fn the_title_is_set_once() {
    let setup = Setup::new(json!({"responses": [text(&["a"]), text(&["b"])]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    client.prompt(&session, "first");
    client.prompt(&session, "second");
    let titles: Vec<_> = client
        .updates(&session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .collect();
    assert_eq!(titles.len(), 1);
    let listed = client.call("session/list", json!({}));
    assert_eq!(listed["sessions"][0]["title"], "first");
}

#[test]
fn finish_reasons_map_to_stop_reasons() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"text": "cut"}], "finish": "length"},
        {"events": [{"text": "no"}], "finish": "content_filter"},
    ]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    assert_eq!(
        client.prompt(&session, "long")["result"]["stopReason"],
        "max_tokens"
    );
    assert_eq!(
        client.prompt(&session, "bad")["result"]["stopReason"],
        "refusal"
    );
}

#[test]
fn the_second_prompt_sees_the_first_exchange() {
    let setup = Setup::new(json!({"responses": [text(&["Paris", "."]), text(&["Yes"])]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    client.prompt(&session, "Capital of France?");
    client.prompt(&session, "Are you sure?");
    let messages = setup.model_messages(1);
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(messages[1]["content"], "Capital of France?");
    assert_eq!(messages[2]["content"], "Paris.");
    assert_eq!(messages[3]["content"], "Are you sure?");
    assert_eq!(setup.mock.requests()[1].body["model"], "mock-model");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains(&setup.cwd())
    );
}

#[test]
fn cancel_mid_stream_answers_cancelled_at_once() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"text": "partial"}, {"stallMs": 30000}, {"text": "never"}]},
        text(&["after"]),
    ]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let id = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    client
        .wait_for(Duration::from_secs(10), |f| {
            f["params"]["update"]["content"]["text"] == "partial"
        })
        .expect("the first chunk streams");
    let cancelled_at = Instant::now();
    client.notify("session/cancel", json!({"sessionId": session}));
    let response = client.response(&id);
    assert_eq!(response["result"]["stopReason"], "cancelled");
    assert!(
        cancelled_at.elapsed() < Duration::from_secs(5),
        "cancel must not wait for the stall"
    );
    assert!(!agent_text(&client.updates(&session)).contains("never"));
    // The session stays usable, and the partial answer is part of its history.
    assert_eq!(
        client.prompt(&session, "again")["result"]["stopReason"],
        "end_turn"
    );
    let messages = setup.model_messages(1);
    assert!(
        messages.iter().any(|m| m["content"] == "partial"),
        "{messages:?}"
    );
}

#[test]
fn cancel_request_cancels_a_prompt() {
    let setup = Setup::new(json!({"responses": [{"events": [{"text": "x"}, {"stallMs": 30000}]}]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let id = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    client.wait_for(Duration::from_secs(10), |f| {
        f["method"] == "session/update"
            && f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    });
    client.notify("$/cancel_request", json!({"requestId": id}));
    assert_eq!(client.response(&id)["result"]["stopReason"], "cancelled");
}

#[test]
fn prompts_queue_behind_a_running_turn_and_cancel_resolves_them() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"text": "one"}, {"stallMs": 800}, {"text": " done"}]},
        text(&["two"]),
        {"events": [{"text": "three"}, {"stallMs": 30000}]},
    ]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let prompt =
        |text: &str| json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
    let first = client.start_request("session/prompt", prompt("1"));
    let second = client.start_request("session/prompt", prompt("2"));
    assert_eq!(client.response(&first)["result"]["stopReason"], "end_turn");
    assert_eq!(client.response(&second)["result"]["stopReason"], "end_turn");
    assert_eq!(
        agent_text(&client.updates(&session)),
        "one donetwo",
        "turns ran one after the other"
    );

    let third = client.start_request("session/prompt", prompt("3"));
    let fourth = client.start_request("session/prompt", prompt("4"));
    client.wait_for(Duration::from_secs(10), |f| {
        f["params"]["update"]["content"]["text"] == "three"
    });
    client.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(client.response(&third)["result"]["stopReason"], "cancelled");
    assert_eq!(
        client.response(&fourth)["result"]["stopReason"],
        "cancelled"
    );
    assert_eq!(
        setup.mock.requests().len(),
        3,
        "the queued prompt never reached the model"
    );
}

#[test]
fn cancel_when_idle_is_harmless() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    client.notify("session/cancel", json!({"sessionId": session}));
    let after = client.drain(Duration::from_millis(200));
    assert!(
        after
            .iter()
            .all(|f| f["params"]["update"]["sessionUpdate"] == "available_commands_update"),
        "nothing but the session's command list: {after:?}"
    );
    assert_eq!(
        client.prompt(&session, "hi")["result"]["stopReason"],
        "end_turn"
    );
}

#[test]
fn a_provider_error_carries_its_message_and_the_session_survives() {
    let setup = Setup::new(json!({"responses": [
        {"status": 500, "error": "the GPU caught fire"},
        text(&["fine now"]),
    ]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let response = client.prompt(&session, "hi");
    let error = &response["error"];
    assert_eq!(error["code"], -32603);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("the GPU caught fire"),
        "{error}"
    );
    assert_eq!(error["data"]["status"], 500);
    assert_eq!(
        client.prompt(&session, "again")["result"]["stopReason"],
        "end_turn"
    );
}

#[test]
fn a_stream_that_stops_mid_message_is_an_error() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"text": "half a sen"}], "truncate": true},
        text(&["whole"]),
    ]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let response = client.prompt(&session, "hi");
    assert_eq!(response["error"]["code"], -32603, "{response}");
    assert_eq!(response["error"]["data"]["category"], "transport");
    // What streamed stays; the failure is told after it, in a message of its own.
    let told = agent_text(&client.updates(&session));
    assert!(
        told.starts_with(
            "half a sen**The connection to the model provider failed:** openai: the model stream"
        ),
        "{told}"
    );
    assert_eq!(
        client.prompt(&session, "again")["result"]["stopReason"],
        "end_turn"
    );
}

#[test]
fn a_stall_past_the_idle_timeout_fails_the_turn() {
    let setup = Setup::new(
        json!({"responses": [{"events": [{"text": "a"}, {"stallMs": 8000}, {"text": "b"}]}]}),
    );
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let response = client.prompt(&session, "hi");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stalled"),
        "{response}"
    );
}

#[test]
fn unsupported_prompt_content_is_refused_not_dropped() {
    let setup = Setup::new(json!({"responses": [text(&["seen"])]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let audio = json!({"sessionId": session, "prompt": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]});
    let error = client.call_err("session/prompt", audio);
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"].as_str().unwrap().contains("audio"),
        "{error}"
    );
    let error = client.call_err(
        "session/prompt",
        json!({"sessionId": session, "prompt": []}),
    );
    assert_eq!(error["code"], -32602);
    // Text, links and embedded text resources all reach the model.
    let mixed = json!({"sessionId": session, "prompt": [
        {"type": "text", "text": "look at"},
        {"type": "resource_link", "uri": "file:///a/b.rs", "name": "b.rs"},
        {"type": "resource", "resource": {"uri": "file:///a/c.rs", "text": "fn c() {}"}},
    ]});
    assert_eq!(
        client.call("session/prompt", mixed)["stopReason"],
        "end_turn"
    );
    let user = setup.model_messages(0)[1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        user.contains("look at") && user.contains("file:///a/b.rs") && user.contains("fn c() {}"),
        "{user}"
    );
}

#[test]
fn a_server_of_your_own_needs_no_key() {
    let setup = Setup::new(json!({"responses": [text(&["local"])]}));
    let config = json!({"dataDir": setup.dir.path(), "providers": {"openai": {"baseUrl": setup.mock.base_url()}}}).to_string();
    let mut client = hearth_testkit::AcpClient::new(hearth_testkit::InProcess::start(&config));
    client.initialize();
    let session = client.new_session(&absolute("/tmp"));
    assert_eq!(
        client.prompt(&session, "hi")["result"]["stopReason"],
        "end_turn"
    );
    assert!(
        !setup.mock.requests()[0]
            .headers
            .contains_key("authorization")
    );
}
