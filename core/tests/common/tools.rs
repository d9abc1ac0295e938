//! What the tool-turn tests share: a workspace in the setup's temp dir, a session in it, the
//! tool-call updates a session saw, and permission answers.

use std::path::Path;
use std::sync::{Arc, Mutex};

use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

use super::Setup;

/// A workspace inside the setup's temp dir (the store lives beside it).
pub fn workspace(setup: &Setup) -> std::path::PathBuf {
    let dir = setup.dir.path().join("project");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn session(client: &mut AcpClient<InProcess>, cwd: &Path) -> String {
    client.new_session(cwd.to_str().unwrap())
}

pub fn tool_updates(client: &AcpClient<InProcess>, session: &str) -> Vec<Value> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update")
        .filter(|u| u.pointer("/_meta/terminal_output").is_none())
        .collect()
}

pub fn permission_answer(option: &str) -> Value {
    json!({"outcome": {"outcome": "selected", "optionId": option}})
}

/// Answers every permission request with `option` and counts them.
pub fn always_answer(
    client: &mut AcpClient<InProcess>,
    option: &'static str,
) -> Arc<Mutex<Vec<Value>>> {
    answer_by(client, move |_| option)
}

/// Answers each permission request with the option `choose` picks from its params, and keeps
/// the requests.
pub fn answer_by(
    client: &mut AcpClient<InProcess>,
    choose: impl Fn(&Value) -> &'static str + Send + 'static,
) -> Arc<Mutex<Vec<Value>>> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    client.respond_with(move |method, params| {
        (method == "session/request_permission").then(|| {
            seen.lock().unwrap().push(params.clone());
            permission_answer(choose(params))
        })
    });
    asked
}

/// A permission request's options as `(optionId, name, kind)`.
pub fn options_of(request: &Value) -> Vec<[String; 3]> {
    let field = |o: &Value, key: &str| o[key].as_str().unwrap_or_default().to_string();
    request["options"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| [field(o, "optionId"), field(o, "name"), field(o, "kind")])
        .collect()
}

/// Prompts `session`, waits for the agent's request `method`, cancels the turn, and checks that
/// the turn ended `cancelled` and the request was withdrawn with `$/cancel_request`. Returns
/// the withdrawn request.
pub fn cancel_while_asked(client: &mut AcpClient<InProcess>, session: &str, method: &str) -> Value {
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    let asked = client
        .wait_for(std::time::Duration::from_secs(10), |f| {
            f["method"] == method
        })
        .unwrap_or_else(|| panic!("no {method} reached the client"));
    client.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    let id = asked["id"].clone();
    let is_withdrawal =
        move |f: &Value| f["method"] == "$/cancel_request" && f["params"]["requestId"] == id;
    // An MCP server's question is withdrawn as the turn's token fires, beside the turn's own
    // end, so its withdrawal may follow the response.
    let withdrawn = client.received.iter().any(&is_withdrawal)
        || client
            .wait_for(std::time::Duration::from_secs(5), &is_withdrawal)
            .is_some();
    assert!(
        withdrawn,
        "the {method} was withdrawn with $/cancel_request"
    );
    asked
}
