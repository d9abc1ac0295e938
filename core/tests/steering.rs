//! Steering (`_session/steering`): a message sent while a turn runs joins its next model
//! request after the current tool results; with no turn it starts one (or, when the client
//! says so, asks for a prompt instead); a cancelled turn's unsent message goes with the next
//! prompt; replay shows it in place.

mod common;

use std::time::Duration;

use common::{Setup, start, text};
use hearth_testkit::{AcpClient, InProcess, agent_text};
use serde_json::{Value, json};

fn steer(client: &mut AcpClient<InProcess>, session: &str, text: &str, meta: Value) -> Value {
    client.call(
        "_session/steering",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}], "_meta": meta}),
    )
}

fn wait_for_update(client: &mut AcpClient<InProcess>, kind: &str, status: Option<&str>) {
    client
        .wait_for(Duration::from_secs(10), |f| {
            let update = &f["params"]["update"];
            update["sessionUpdate"] == kind && status.is_none_or(|s| update["status"] == s)
        })
        .unwrap_or_else(|| panic!("no {kind} update"));
}

/// The OpenAI messages of request `n` as (role, text).
fn messages(setup: &Setup, n: usize) -> Vec<(String, String)> {
    setup
        .model_messages(n)
        .iter()
        .map(|m| {
            let text = m["content"].as_str().unwrap_or_default().to_string();
            (m["role"].as_str().unwrap().to_string(), text)
        })
        .collect()
}

fn bypass(setup: &Setup) -> AcpClient<InProcess> {
    start(setup, json!({"permissionMode": "bypass"}))
}

#[test]
fn initialize_advertises_steering() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = AcpClient::new(InProcess::start(&setup.config()));
    let result = client.initialize();
    assert_eq!(result["_meta"]["steering"]["supported"], true);
}

/// Sent while a command runs, the message waits for the tool's result and goes with the next
/// request, after it; the replay shows it between the call and the answer.
#[test]
fn a_message_steered_during_a_tool_call_joins_the_next_request() {
    let command = json!({"command": "sleep 1; echo slept"}).to_string();
    let setup = Setup::new(json!({"responses": [
        {"events": [{"toolCall": {"id": "c1", "name": "run_command", "arguments": command}}]},
        text(&["Checked the README too."]),
    ]}));
    let mut client = bypass(&setup);
    // A project beside the data dir: the sandbox refuses a workspace holding Hearth's state.
    let cwd = common::tools::workspace(&setup);
    let session = client.new_session(cwd.to_str().unwrap());
    let pending = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "run it"}]}),
    );
    wait_for_update(&mut client, "tool_call_update", Some("in_progress"));
    let answer = steer(&mut client, &session, "also check the README", json!({}));
    assert_eq!(answer, json!({"outcome": "injected"}));
    let response = client.response(&pending);
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    assert_eq!(setup.mock.requests().len(), 2);
    let second = messages(&setup, 1);
    let roles: Vec<&str> = second.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "user"],
        "{second:?}"
    );
    assert!(second[3].1.contains("slept"), "the tool finished first");
    assert_eq!(second[4].1, "also check the README");

    // Replayed in place: after the tool call, before the answer.
    let mut fresh = start(&setup, json!({}));
    fresh.call(
        "session/load",
        json!({"sessionId": session, "cwd": setup.cwd(), "mcpServers": []}),
    );
    let kinds: Vec<String> = fresh
        .updates(&session)
        .iter()
        .map(|u| {
            let kind = u["sessionUpdate"].as_str().unwrap().to_string();
            match u["content"]["text"].as_str() {
                Some(text) if kind == "user_message_chunk" => format!("user: {text}"),
                _ => kind,
            }
        })
        .collect();
    let steered = kinds
        .iter()
        .position(|k| k == "user: also check the README")
        .unwrap();
    let call = kinds.iter().position(|k| k == "tool_call").unwrap();
    let answer = kinds
        .iter()
        .rposition(|k| k == "agent_message_chunk")
        .unwrap();
    assert!(call < steered && steered < answer, "{kinds:?}");
}

/// A message steered in while the model writes its last answer gets an answer of its own.
#[test]
fn a_message_steered_during_the_last_answer_gets_one_more_step() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"text": "Working"}, {"stallMs": 800}, {"text": " on it."}]},
        text(&["And the tests too, then."]),
    ]}));
    let mut client = bypass(&setup);
    let session = client.new_session(&setup.cwd());
    let pending = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "fix it"}]}),
    );
    wait_for_update(&mut client, "agent_message_chunk", None);
    let answer = steer(&mut client, &session, "and run the tests", json!({}));
    assert_eq!(answer["outcome"], "injected");
    assert_eq!(
        client.response(&pending)["result"]["stopReason"],
        "end_turn"
    );
    let second = messages(&setup, 1);
    assert_eq!(
        second[1..],
        [
            ("user".to_string(), "fix it".to_string()),
            ("assistant".to_string(), "Working on it.".to_string()),
            ("user".to_string(), "and run the tests".to_string()),
        ]
    );
}

/// A message steered in while a command runs (`/compact`, whose summary request is all it
/// asks) is answered when the command ends, in the same turn (before: `injected`, then only
/// kept for the next prompt's context).
#[test]
fn a_message_steered_during_a_command_gets_its_answer_after_it() {
    let setup = Setup::new(json!({"responses": [
        text(&["First."]),
        {"events": [{"stallMs": 800}, {"text": "Goal: a first answer."}]},
        text(&["Running them."]),
    ]}));
    let mut client = bypass(&setup);
    let session = client.new_session(&setup.cwd());
    client.prompt(&session, "first");
    let pending = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "/compact"}]}),
    );
    let asked = std::time::Instant::now();
    while setup.mock.requests().len() < 2 {
        assert!(
            asked.elapsed() < Duration::from_secs(10),
            "no summary request"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let answer = steer(&mut client, &session, "and run the tests", json!({}));
    assert_eq!(answer["outcome"], "injected");
    assert_eq!(
        client.response(&pending)["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(setup.mock.requests().len(), 3);
    let third = messages(&setup, 2);
    assert_eq!(
        third.last().unwrap(),
        &("user".to_string(), "and run the tests".to_string())
    );
    assert!(agent_text(&client.updates(&session)).ends_with("Running them."));
}

#[test]
fn with_no_turn_running_steering_starts_one_unless_a_prompt_is_required() {
    let setup = Setup::new(json!({"responses": [text(&["Started from a steer."])]}));
    let mut client = bypass(&setup);
    let session = client.new_session(&setup.cwd());

    let refused = steer(
        &mut client,
        &session,
        "hello?",
        json!({"steering": {"idleBehavior": "promptRequired"}}),
    );
    assert_eq!(
        refused,
        json!({"outcome": "promptRequired", "reason": "noRunningTurn"})
    );
    assert!(setup.mock.requests().is_empty(), "nothing happened");

    let started = steer(&mut client, &session, "hello", json!({}));
    assert_eq!(started, json!({"outcome": "startedNewTurn"}));
    client
        .wait_for(Duration::from_secs(10), |f| {
            f["params"]["update"]["content"]["text"] == "Started from a steer."
        })
        .expect("the steered turn answers");
    assert_eq!(messages(&setup, 0)[1], ("user".into(), "hello".into()));
}

/// Cancelled before it was sent, the steered message is kept: the next prompt carries it.
#[test]
fn a_steered_message_survives_a_cancel_and_goes_with_the_next_prompt() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"text": "Thinking"}, {"stallMs": 10000}, {"text": "never"}]},
        text(&["Both noted."]),
    ]}));
    let mut client = bypass(&setup);
    let session = client.new_session(&setup.cwd());
    let pending = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "first"}]}),
    );
    wait_for_update(&mut client, "agent_message_chunk", None);
    assert_eq!(
        steer(&mut client, &session, "use tabs", json!({}))["outcome"],
        "injected"
    );
    client.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(
        client.response(&pending)["result"]["stopReason"],
        "cancelled"
    );

    let answer = client.prompt(&session, "second");
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert!(agent_text(&client.updates(&session)).contains("Both noted."));
    let texts: Vec<String> = messages(&setup, 1)
        .into_iter()
        .filter(|(role, _)| role == "user")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(texts, ["first", "use tabs", "second"]);
}

#[test]
fn steering_checks_its_prompt_and_its_session() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = bypass(&setup);
    let empty = client.call_err(
        "_session/steering",
        json!({"sessionId": "sess_nope", "prompt": []}),
    );
    assert_eq!(empty["code"], -32602);
    let unknown = client.call_err(
        "_session/steering",
        json!({"sessionId": "sess_nope", "prompt": [{"type": "text", "text": "x"}]}),
    );
    assert_eq!(unknown["code"], -32002);
}
