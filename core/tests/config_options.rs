//! Config options (model, mode, thought level, sandbox) and the legacy modes API: answers, updates,
//! persistence across a restart, and the effect on the model request.

mod common;

use common::{Setup, text};
use hearth_testkit::{AcpClient, InProcess, absolute};
use serde_json::{Value, json};

fn setup(responses: Value) -> Setup {
    Setup::new(json!({ "responses": responses }))
}

/// An engine whose catalog has a plain model and a reasoning one.
fn client(setup: &Setup) -> AcpClient<InProcess> {
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["models"] =
        json!([{"id": "mock-model", "name": "Mock"}, {"id": "mock-reasoner", "thinking": true}]);
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.initialize();
    client
}

/// The session's updates but the command list, which comes when the session is up.
fn config_updates(client: &AcpClient<InProcess>, session: &str) -> Vec<Value> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] != "available_commands_update")
        .collect()
}

fn option<'a>(options: &'a Value, id: &str) -> Option<&'a Value> {
    options.as_array().unwrap().iter().find(|o| o["id"] == id)
}

fn set(client: &mut AcpClient<InProcess>, session: &str, id: &str, value: &str) -> Value {
    client.request(
        "session/set_config_option",
        json!({"sessionId": session, "configId": id, "value": value}),
    )
}

#[test]
fn new_sessions_list_model_and_mode_and_thinking_only_for_thinking_models() {
    let setup = setup(json!([]));
    let mut client = client(&setup);
    let created = client.call(
        "session/new",
        json!({"cwd": absolute("/w"), "mcpServers": []}),
    );
    let options = &created["configOptions"];
    assert_eq!(option(options, "model").unwrap()["category"], "model");
    assert_eq!(
        option(options, "model").unwrap()["currentValue"],
        "mock-model"
    );
    assert_eq!(option(options, "mode").unwrap()["category"], "mode");
    assert!(
        option(options, "thought_level").is_none(),
        "mock-model does not think"
    );
    assert_eq!(created["modes"]["currentModeId"], "ask");
    assert_eq!(
        created["modes"]["availableModes"].as_array().unwrap().len(),
        4
    );

    let session = created["sessionId"].as_str().unwrap().to_string();
    let answer = set(&mut client, &session, "model", "mock-reasoner");
    let options = &answer["result"]["configOptions"];
    assert_eq!(
        option(options, "model").unwrap()["currentValue"],
        "mock-reasoner"
    );
    let level = option(options, "thought_level").expect("a thinking model has a thought level");
    assert_eq!(
        (level["category"].as_str(), level["currentValue"].as_str()),
        (Some("thought_level"), Some("medium"))
    );
    let updates = client.updates(&session);
    let update = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "config_option_update")
        .expect("config_option_update sent");
    assert_eq!(&update["configOptions"], options);
}

#[test]
fn bad_values_are_invalid_params_and_change_nothing() {
    let setup = setup(json!([]));
    let mut client = client(&setup);
    let session = client.new_session(&absolute("/w"));
    for (id, value) in [
        ("model", "gpt-9000"),
        ("mode", "yolo"),
        ("colour", "red"),
        ("thought_level", "high"),
        ("sandbox", "danger-full-access"),
    ] {
        let error = &set(&mut client, &session, id, value)["error"];
        assert_eq!(error["code"], -32602, "{id}={value}: {error}");
    }
    let error = client.call_err(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "turbo"}),
    );
    assert_eq!(error["code"], -32602);
    assert!(
        config_updates(&client, &session).is_empty(),
        "nothing changed, nothing announced"
    );
}

#[test]
fn set_mode_and_the_mode_option_stay_in_sync_and_persist() {
    let setup = setup(json!([text(&["ok"])]));
    let session = {
        let mut client = client(&setup);
        let session = client.new_session(&absolute("/w"));
        assert_eq!(
            client.call(
                "session/set_mode",
                json!({"sessionId": session, "modeId": "plan"})
            ),
            json!({})
        );
        let kinds: Vec<Value> = config_updates(&client, &session)
            .iter()
            .map(|u| u["sessionUpdate"].clone())
            .collect();
        assert_eq!(
            kinds,
            [json!("config_option_update"), json!("current_mode_update")]
        );
        let answer = set(&mut client, &session, "model", "mock-reasoner");
        assert_eq!(
            option(&answer["result"]["configOptions"], "mode").unwrap()["currentValue"],
            "plan"
        );
        set(&mut client, &session, "thought_level", "high");
        set(&mut client, &session, "sandbox", "read-only");
        session
    };
    // A new engine on the same store: the values survived, and the replay shows the changes.
    let mut client = client(&setup);
    let loaded = client.call(
        "session/load",
        json!({"sessionId": session, "cwd": absolute("/w"), "mcpServers": []}),
    );
    assert_eq!(loaded["modes"]["currentModeId"], "plan");
    let options = &loaded["configOptions"];
    assert_eq!(
        option(options, "model").unwrap()["currentValue"],
        "mock-reasoner"
    );
    assert_eq!(
        option(options, "thought_level").unwrap()["currentValue"],
        "high"
    );
    assert_eq!(
        option(options, "sandbox").unwrap()["currentValue"],
        "read-only"
    );
    let replayed: Vec<Value> = client
        .updates(&session)
        .iter()
        .map(|u| u["sessionUpdate"].clone())
        .collect();
    assert_eq!(
        replayed
            .iter()
            .filter(|k| *k == "current_mode_update")
            .count(),
        1
    );
    assert_eq!(
        replayed
            .iter()
            .filter(|k| *k == "config_option_update")
            .count(),
        4
    );

    client.prompt(&session, "think hard");
    let body = &setup.mock.requests()[0].body;
    assert_eq!(body["model"], "mock-reasoner");
    assert_eq!(body["reasoning_effort"], "high");
}
