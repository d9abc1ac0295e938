//! JSON-RPC rules: every malformed frame gets the answer the spec gives, and the engine
//! keeps serving.

mod common;

use std::time::Duration;

use common::Setup;
use hearth_testkit::{AcpClient, InProcess, absolute};
use serde_json::{Value, json};

fn setup() -> (Setup, AcpClient<InProcess>) {
    let setup = Setup::new(json!({"responses": []}));
    let client = setup.client();
    (setup, client)
}

/// The next frame, which must be an error with this code and id.
fn expect_error(client: &mut AcpClient<InProcess>, code: i64, id: Value) -> Value {
    let frame = client.next(Duration::from_secs(10)).expect("an answer");
    assert_eq!(frame["id"], id, "{frame}");
    assert_eq!(frame["error"]["code"], code, "{frame}");
    frame["error"].clone()
}

/// Proof that the engine still serves after whatever came before.
fn still_serving(client: &mut AcpClient<InProcess>) {
    let result = client.call("session/list", json!({}));
    assert!(result["sessions"].is_array());
}

#[test]
fn invalid_json_is_a_parse_error_with_null_id() {
    let (_s, mut client) = setup();
    client.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 1, ");
    expect_error(&mut client, -32700, Value::Null);
    still_serving(&mut client);
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let (_s, mut client) = setup();
    client
        .transport
        .engine
        .send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}")
        .unwrap();
    expect_error(&mut client, -32700, Value::Null);
    still_serving(&mut client);
}

#[test]
fn a_batch_gets_one_invalid_request() {
    let (_s, mut client) = setup();
    client.send_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"session/list"},{"jsonrpc":"2.0","id":2,"method":"session/list"}]"#);
    expect_error(&mut client, -32600, Value::Null);
    assert!(
        client.drain(Duration::from_millis(200)).is_empty(),
        "exactly one answer to a batch"
    );
    still_serving(&mut client);
}

#[test]
fn malformed_envelopes_are_invalid_requests() {
    let (_s, mut client) = setup();
    client.send_raw(r#"{"jsonrpc":"1.0","id":7,"method":"session/list"}"#);
    expect_error(&mut client, -32600, json!(7));
    client.send_raw(r#"{"jsonrpc":"2.0","id":8,"method":42}"#);
    expect_error(&mut client, -32600, json!(8));
    client.send_raw(r#"{"jsonrpc":"2.0","id":[1],"method":"session/list"}"#);
    expect_error(&mut client, -32600, Value::Null);
    client.send_raw(r#""just a string""#);
    expect_error(&mut client, -32600, Value::Null);
    still_serving(&mut client);
}

#[test]
fn unknown_methods_are_not_found_and_unknown_notifications_ignored() {
    let (_s, mut client) = setup();
    let error = client.call_err("session/teleport", json!({}));
    assert_eq!(error["code"], -32601);
    let error = client.call_err("_vendor/custom", json!({}));
    assert_eq!(
        error["code"], -32601,
        "unhandled extension requests are not found"
    );
    client.notify("_vendor/ping", json!({}));
    client.notify("$/progress", json!({}));
    client.notify("made/up", json!({}));
    assert!(
        client.drain(Duration::from_millis(200)).is_empty(),
        "notifications are never answered"
    );
    still_serving(&mut client);
}

#[test]
fn bad_params_name_the_field() {
    let (_s, mut client) = setup();
    let error = client.call_err("session/new", json!({"mcpServers": []}));
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"].as_str().unwrap().contains("cwd"),
        "{error}"
    );
    let error = client.call_err("session/new", json!({"cwd": 5, "mcpServers": []}));
    assert!(
        error["message"].as_str().unwrap().contains("cwd"),
        "{error}"
    );
    let error = client.call_err(
        "session/new",
        json!({"cwd": "relative/dir", "mcpServers": []}),
    );
    assert!(
        error["message"].as_str().unwrap().contains("absolute"),
        "{error}"
    );
    let error = client.call_err("session/prompt", json!({"sessionId": "s", "prompt": "hi"}));
    assert!(
        error["message"].as_str().unwrap().contains("prompt"),
        "{error}"
    );
    let error = client.call_err(
        "session/load",
        json!({"sessionId": 3, "cwd": absolute("/"), "mcpServers": []}),
    );
    assert!(
        error["message"].as_str().unwrap().contains("sessionId"),
        "{error}"
    );
}

#[test]
fn requests_before_initialize_are_refused() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = AcpClient::new(InProcess::start(&setup.config()));
    let error = client.call_err(
        "session/new",
        json!({"cwd": absolute("/tmp"), "mcpServers": []}),
    );
    assert_eq!(error["code"], -32600);
    assert!(error["message"].as_str().unwrap().contains("initialize"));
    client.initialize();
    client.new_session(&absolute("/tmp"));
}

#[test]
fn initialize_answers_version_1_whatever_was_asked_and_again() {
    let (_s, mut client) = setup();
    for asked in [1, 65535, 2] {
        let result = client.call(
            "initialize",
            json!({"protocolVersion": asked, "clientCapabilities": {}}),
        );
        assert_eq!(result["protocolVersion"], 1);
        assert_eq!(result["agentInfo"]["name"], "hearth");
        assert!(result["agentInfo"]["version"].is_string());
        assert_eq!(result["agentCapabilities"]["loadSession"], true);
        let auth = &result["authMethods"][0];
        assert!(
            auth["description"]
                .as_str()
                .unwrap()
                .contains("OPENAI_API_KEY"),
            "{auth}"
        );
        // In process no host passes a sign-in port (`HostPorts::sign_in`), so no legacy
        // `terminal-auth`: there is no `hearth` binary to run.
        assert_eq!(auth.get("_meta"), None, "{auth}");
        // The terminal method only for a client that says it runs one.
        assert_eq!(result["authMethods"].as_array().unwrap().len(), 2);
        let result = client.call(
            "initialize",
            json!({"protocolVersion": asked, "clientCapabilities": {"auth": {"terminal": true}}}),
        );
        let terminal = &result["authMethods"][2];
        assert_eq!(terminal["type"], "terminal");
        assert_eq!(terminal["id"], "hearth-auth");
        assert_eq!(terminal["args"], json!(["auth"]));
    }
}

#[test]
fn responses_to_ids_never_sent_are_ignored() {
    let (_s, mut client) = setup();
    client.send_raw(r#"{"jsonrpc":"2.0","id":999,"result":{}}"#);
    client.send_raw(r#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}"#);
    assert!(client.drain(Duration::from_millis(200)).is_empty());
    still_serving(&mut client);
}

/// A client that could not parse a notification may answer it with `"id": null` (Toad did).
/// Answering that would make two such peers loop forever: a response is never answered.
#[test]
fn responses_with_a_null_id_are_dropped_unanswered() {
    let (_s, mut client) = setup();
    client
        .send_raw(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    client.send_raw(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#);
    client.send_raw(r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"both"}}"#);
    assert!(client.drain(Duration::from_millis(200)).is_empty());
    still_serving(&mut client);
}

#[test]
fn huge_and_deep_frames_are_answered() {
    let (_s, mut client) = setup();
    let huge = "x".repeat(10 * 1024 * 1024);
    client.send_raw(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "no/such", "params": {"blob": huge}})
            .to_string(),
    );
    expect_error(&mut client, -32601, json!(1));
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    client.send_raw(&deep);
    expect_error(&mut client, -32700, Value::Null);
    let deep_object = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"x","params":{}{}}}"#,
        r#"{"a":"#.repeat(5000),
        "}".repeat(5000)
    );
    client.send_raw(&deep_object);
    expect_error(&mut client, -32700, Value::Null);
    still_serving(&mut client);
}

#[test]
fn a_reused_in_flight_id_is_refused() {
    let setup =
        Setup::new(json!({"responses": [{"events": [{"stallMs": 1500}, {"text": "late"}]}]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let prompt = json!({"jsonrpc": "2.0", "id": 42, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}});
    client.send_frame(&prompt);
    // Raw, so the test client keeps expecting a prompt response for id 42.
    client.send_raw(r#"{"jsonrpc":"2.0","id":42,"method":"session/list","params":{}}"#);
    let error = client
        .wait_for(Duration::from_secs(5), |f| f["id"] == 42)
        .unwrap();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    let answer = client
        .wait_for(Duration::from_secs(10), |f| f["id"] == 42)
        .unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn");
}

#[test]
fn cancel_request_for_unknown_ids_is_ignored() {
    let (_s, mut client) = setup();
    client.notify("$/cancel_request", json!({"requestId": 12345}));
    client.notify("session/cancel", json!({"sessionId": "nope"}));
    client.notify("session/cancel", json!({}));
    assert!(client.drain(Duration::from_millis(200)).is_empty());
    still_serving(&mut client);
}

/// An embedding host passes no sign-in port: the engine never reads the key `hearth auth`
/// stores (here its file, where the CLI would put it), and says where a host's key goes.
#[test]
fn in_process_the_terminal_method_reads_no_store() {
    let setup = Setup::new(json!({"responses": []}));
    let user_dir = setup.dir.path().join("user-config");
    std::fs::create_dir_all(&user_dir).unwrap();
    std::fs::write(
        user_dir.join("credentials.json"),
        json!({"openai": "sk-stored"}).to_string(),
    )
    .unwrap();
    let config = json!({"dataDir": ":memory:", "configDir": user_dir,
                        "providers": {"openai": {"baseUrl": setup.mock.base_url()}}});
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.initialize();
    let error = client.call_err("authenticate", json!({"methodId": "hearth-auth"}));
    assert_eq!(error["code"], -32000, "{error}");
    let detail = error["data"]["detail"].as_str().unwrap();
    assert!(detail.contains("providers.<name>.apiKey"), "{detail}");
}
