//! Questions to the user, end to end: `ask_user` as an `elicitation/create` form for a client
//! that advertises `elicitation.form` (answered, declined, cancelled by the client, and the
//! turn cancelled while it waits), as a permission request whose options are the choices for
//! one that does not (and "cannot ask" where one pick cannot answer), and an MCP server's own
//! elicitation (the Python SDK's server, `tests/mcp/server.py` `pick_colour`) reaching the
//! client both ways, tied to the one call running on the server. Every frame is validated
//! against the ACP schema by the testkit.

mod common;

use std::sync::{Arc, Mutex};

use common::final_status;
use common::tools::{
    cancel_while_asked, options_of, permission_answer, session, tool_updates, workspace,
};
use common::{Setup, call, config, mcp_server, text, tool_results};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

/// A client that shows forms (or not), on this setup's engine.
fn client(setup: &Setup, forms: bool) -> AcpClient<InProcess> {
    client_with(setup, forms, json!({}))
}

/// The same, with `extra` merged into the config.
fn client_with(setup: &Setup, forms: bool, extra: Value) -> AcpClient<InProcess> {
    let mut client = AcpClient::new(InProcess::start(&config(setup, extra)));
    let capabilities = if forms {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
    );
    client
}

/// Answers every request `method` with `answer`, and keeps the requests' params.
fn answering(
    client: &mut AcpClient<InProcess>,
    method: &'static str,
    answer: Value,
) -> Arc<Mutex<Vec<Value>>> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    client.respond_with(move |m, params| {
        (m == method).then(|| {
            seen.lock().unwrap().push(params.clone());
            answer.clone()
        })
    });
    asked
}

fn which_database() -> Value {
    call(
        "q",
        "ask_user",
        json!({"question": "Which database?", "options": [
            {"label": "SQLite", "description": "one file"},
            {"label": "Postgres"},
        ]}),
    )
}

/// One question and the model's reply after it.
fn question_setup(question: Value) -> Setup {
    Setup::new(json!({"responses": [question, text(&["OK."])]}))
}

#[test]
fn a_question_is_a_form_scoped_to_its_call_and_the_answer_reaches_the_model() {
    let setup = question_setup(which_database());
    let mut client = client(&setup, true);
    let accept = json!({"action": "accept", "content": {"answer": "Postgres", "other": "v16"}});
    let asked = answering(&mut client, "elicitation/create", accept);
    let session = session(&mut client, &workspace(&setup));
    let done = client.prompt(&session, "set it up");
    assert_eq!(done["result"]["stopReason"], "end_turn");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    let form = &asked[0];
    let call = &tool_updates(&client, &session)[0];
    assert_eq!(form["sessionId"], session);
    assert_eq!(
        form["toolCallId"], call["toolCallId"],
        "scoped to the ask_user call"
    );
    assert_eq!(form["mode"], "form");
    assert_eq!(form["message"], "Which database?");
    let schema = &form["requestedSchema"];
    assert_eq!(
        schema["properties"]["answer"]["oneOf"],
        json!([
            {"const": "SQLite", "title": "SQLite — one file"},
            {"const": "Postgres", "title": "Postgres"},
        ])
    );
    assert_eq!(schema["properties"]["other"]["type"], "string");
    assert!(
        client
            .agent_requests("session/request_permission")
            .is_empty(),
        "a form, not a permission request"
    );
    assert_eq!(
        tool_results(&setup, 1),
        ["The user answered: Postgres, \"v16\""]
    );
    assert_eq!(final_status(&client, &session), ["completed"]);
}

/// The model's result and the call's final status when the client answers the form with
/// `action` and no content.
fn form_ended_by(action: &str) -> (String, Vec<String>) {
    let setup = question_setup(which_database());
    let mut client = client(&setup, true);
    answering(
        &mut client,
        "elicitation/create",
        json!({ "action": action }),
    );
    let session = session(&mut client, &workspace(&setup));
    client.prompt(&session, "set it up");
    let result = tool_results(&setup, 1).remove(0);
    (result, final_status(&client, &session))
}

#[test]
fn a_form_declined_or_cancelled_by_the_client_is_no_answer_and_the_model_is_told() {
    for (action, told) in [
        ("decline", "The user declined to answer."),
        (
            "cancel",
            "The question was cancelled before the user answered.",
        ),
    ] {
        let (result, status) = form_ended_by(action);
        assert!(result.starts_with(told), "{action}: {result}");
        assert_eq!(status, ["failed"]);
    }
}

#[test]
fn cancelling_the_turn_withdraws_the_form_and_ends_the_turn() {
    let setup = question_setup(which_database());
    let mut client = client(&setup, true);
    let session = session(&mut client, &workspace(&setup));
    cancel_while_asked(&mut client, &session, "elicitation/create");
    assert_eq!(final_status(&client, &session), ["failed"]);
}

#[test]
fn without_forms_the_choices_are_the_options_of_a_permission_request() {
    let setup = question_setup(which_database());
    let mut client = client(&setup, false);
    let asked = answering(
        &mut client,
        "session/request_permission",
        permission_answer("choice_0"),
    );
    let session = session(&mut client, &workspace(&setup));
    client.prompt(&session, "set it up");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        options_of(&asked[0]),
        [
            ["choice_0", "SQLite — one file", "allow_once"],
            ["choice_1", "Postgres", "allow_once"],
            ["decline", "Decline", "reject_once"],
        ]
    );
    let call = &tool_updates(&client, &session)[0];
    assert_eq!(asked[0]["toolCall"]["toolCallId"], call["toolCallId"]);
    assert_eq!(asked[0]["toolCall"]["title"], "Which database?");
    assert!(client.agent_requests("elicitation/create").is_empty());
    assert_eq!(tool_results(&setup, 1), ["The user answered: SQLite"]);
}

#[test]
fn without_forms_a_free_text_question_says_it_cannot_ask() {
    let free = call(
        "q",
        "ask_user",
        json!({"question": "What should the app be called?"}),
    );
    let setup = question_setup(free);
    let mut client = client(&setup, false);
    let asked = answering(
        &mut client,
        "session/request_permission",
        permission_answer("choice_0"),
    );
    let session = session(&mut client, &workspace(&setup));
    assert_eq!(
        client.prompt(&session, "name it")["result"]["stopReason"],
        "end_turn"
    );
    assert!(asked.lock().unwrap().is_empty(), "nothing was asked");
    let result = &tool_results(&setup, 1)[0];
    assert!(
        result.starts_with("Could not ask the user: this client shows no forms"),
        "{result}"
    );
    assert_eq!(final_status(&client, &session), ["failed"]);
}

/// A session with the MCP test server `files`, whose `pick_colour` elicits.
fn colour_session(client: &mut AcpClient<InProcess>, setup: &Setup) -> String {
    let cwd = workspace(setup);
    let created = client.call(
        "session/new",
        json!({"cwd": cwd, "mcpServers": [mcp_server("files", &[])]}),
    );
    created["sessionId"].as_str().unwrap().to_string()
}

fn colour_setup() -> Setup {
    question_setup(call("p", "mcp__files__pick_colour", json!({})))
}

/// A client for the MCP tests: in `bypass`, so the server's tool runs without asking and
/// the only question is the server's.
fn colour_client(setup: &Setup, forms: bool) -> AcpClient<InProcess> {
    client_with(setup, forms, json!({"permissionMode": "bypass"}))
}

/// The id of the session's one tool call, as the client was told it.
fn the_call(client: &AcpClient<InProcess>, session: &str) -> Value {
    let calls: Vec<Value> = client
        .updates(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| u["toolCallId"].clone())
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    calls[0].clone()
}

#[test]
fn an_mcp_servers_elicitation_reaches_the_client_as_a_form() {
    let setup = colour_setup();
    let mut client = colour_client(&setup, true);
    let accept = json!({"action": "accept", "content": {"colour": "green"}});
    let asked = answering(&mut client, "elicitation/create", accept);
    let session = colour_session(&mut client, &setup);
    client.prompt(&session, "pick");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["sessionId"], session, "attributed to the session");
    assert_eq!(
        asked[0]["toolCallId"],
        the_call(&client, &session),
        "and to the one call running on the server"
    );
    assert_eq!(
        asked[0]["message"],
        "The MCP server `files` asks: Which colour?"
    );
    assert_eq!(
        asked[0]["requestedSchema"]["properties"]["colour"]["enum"],
        json!(["red", "green", "blue"])
    );
    assert_eq!(tool_results(&setup, 1), ["picked green"]);
}

#[test]
fn an_mcp_servers_elicitation_falls_back_to_a_permission_request() {
    let setup = colour_setup();
    let mut client = colour_client(&setup, false);
    let asked = answering(
        &mut client,
        "session/request_permission",
        permission_answer("choice_2"),
    );
    let session = colour_session(&mut client, &setup);
    client.prompt(&session, "pick");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1, "only the server's question asked");
    let question = &asked[0];
    assert_eq!(
        question["toolCall"]["title"],
        "The MCP server `files` asks: Which colour?"
    );
    assert_eq!(
        question["toolCall"]["toolCallId"],
        the_call(&client, &session)
    );
    let names: Vec<&str> = question["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["red", "green", "blue", "Decline"]);
    assert_eq!(tool_results(&setup, 1), ["picked blue"]);
}

#[test]
fn an_mcp_servers_elicitation_declined_by_the_user_is_declined_to_the_server() {
    let setup = colour_setup();
    let mut client = colour_client(&setup, true);
    answering(
        &mut client,
        "elicitation/create",
        json!({"action": "decline"}),
    );
    let session = colour_session(&mut client, &setup);
    client.prompt(&session, "pick");
    assert_eq!(tool_results(&setup, 1), ["decline"]);
}

#[test]
fn cancelling_the_turn_withdraws_an_mcp_servers_question() {
    let setup = colour_setup();
    let mut client = colour_client(&setup, true);
    let session = colour_session(&mut client, &setup);
    let asked = cancel_while_asked(&mut client, &session, "elicitation/create");
    assert_eq!(
        asked["params"]["message"],
        "The MCP server `files` asks: Which colour?"
    );
    // The session goes on.
    client.respond_with(|method, _| {
        (method == "elicitation/create")
            .then(|| json!({"action": "accept", "content": {"colour": "red"}}))
    });
    assert_eq!(
        client.prompt(&session, "again")["result"]["stopReason"],
        "end_turn"
    );
}
