//! `session/fork` and `session/set_title` (both unstable), black-box through frames: the
//! fork's copied history and model context, its cut points and lineage, what happens to it
//! when its parent goes; user titles, normalised, announced, kept across a restart, never
//! replaced by the agent's.

mod common;

use std::time::Duration;

use common::{Setup, call, mcp_server, start, text, tool_results};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

fn fork(client: &mut AcpClient<InProcess>, parent: &str, cwd: &str, meta: Value) -> Value {
    client.request(
        "session/fork",
        json!({"sessionId": parent, "cwd": cwd, "mcpServers": [], "_meta": meta}),
    )
}

fn fork_id(client: &mut AcpClient<InProcess>, parent: &str, cwd: &str, meta: Value) -> String {
    let response = fork(client, parent, cwd, meta);
    let id = response["result"]["sessionId"].as_str();
    id.unwrap_or_else(|| panic!("fork failed: {response}"))
        .to_string()
}

/// The updates `session/load` replays for `session`, in a fresh client on the same store.
fn replay(setup: &Setup, session: &str) -> Vec<Value> {
    let mut client = setup.client();
    let params = json!({"sessionId": session, "cwd": setup.cwd(), "mcpServers": []});
    client.call("session/load", params);
    client.updates(session)
}

/// `(kind, text)` of each replayed update that carries text.
fn texts(updates: &[Value]) -> Vec<(String, String)> {
    updates
        .iter()
        .filter_map(|u| {
            let text = u["content"]["text"].as_str().or(u["title"].as_str())?;
            Some((u["sessionUpdate"].as_str()?.to_string(), text.to_string()))
        })
        .collect()
}

/// The message id of the logged prompt whose text is `prompt`.
fn message_id(updates: &[Value], prompt: &str) -> String {
    updates
        .iter()
        .find(|u| u["sessionUpdate"] == "user_message_chunk" && u["content"]["text"] == prompt)
        .and_then(|u| u["messageId"].as_str())
        .unwrap_or_else(|| panic!("no prompt {prompt:?} in {updates:#?}"))
        .to_string()
}

fn listed(client: &mut AcpClient<InProcess>, id: &str) -> Option<Value> {
    let list = client.call("session/list", json!({}));
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == id)
        .cloned()
}

fn set_title(client: &mut AcpClient<InProcess>, session: &str, title: &str) -> Value {
    client.request(
        "session/set_title",
        json!({"sessionId": session, "title": title}),
    )
}

fn titles(client: &AcpClient<InProcess>, session: &str) -> Vec<String> {
    client
        .updates(session)
        .iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .map(|u| u["title"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn initialize_advertises_fork_and_titles() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = AcpClient::new(InProcess::start(&setup.config()));
    let caps = client.initialize()["agentCapabilities"]["sessionCapabilities"].clone();
    assert_eq!(caps["fork"], json!({}));
    assert_eq!(caps["title"], json!({}));
}

/// The fork's first request is the parent's context, then the new prompt: byte for byte
/// the request the parent sends for the same prompt, so the provider's cache serves both.
#[test]
fn a_fork_copies_the_whole_log_and_the_models_context() {
    let setup = Setup::new(json!({"responses": [
        text(&["A1"]), text(&["A2"]), text(&["fork says"]), text(&["parent says"]),
    ]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let parent = client.new_session(&cwd);
    client.prompt(&parent, "one");
    client.prompt(&parent, "two");

    let response = fork(&mut client, &parent, &cwd, json!({}));
    let result = &response["result"];
    let child = result["sessionId"].as_str().unwrap().to_string();
    assert_ne!(child, parent);
    assert_eq!(result["modes"]["currentModeId"], "ask");
    assert_eq!(result["configOptions"][0]["currentValue"], "mock-model");
    assert_eq!(
        texts(&replay(&setup, &child)),
        texts(&replay(&setup, &parent))
    );

    client.prompt(&child, "three");
    client.prompt(&parent, "three");
    let requests = setup.mock.requests();
    assert_eq!(
        requests[2].raw, requests[3].raw,
        "the same request, byte for byte"
    );
    let roles: Vec<(&str, &str)> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        [
            ("user", "one"),
            ("assistant", "A1"),
            ("user", "two"),
            ("assistant", "A2"),
            ("user", "three")
        ]
    );
    // The two sessions went their own ways.
    let child_log = texts(&replay(&setup, &child));
    assert!(child_log.contains(&("agent_message_chunk".into(), "fork says".into())));
    assert!(!child_log.contains(&("agent_message_chunk".into(), "parent says".into())));
}

#[test]
fn a_fork_at_a_prompt_keeps_what_came_before_it() {
    let setup = Setup::new(json!({"responses": [
        text(&["A1"]), text(&["A2"]), text(&["A3"]), text(&["side"]), text(&["jb"]),
    ]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let parent = client.new_session(&cwd);
    for prompt in ["one", "two", "three"] {
        client.prompt(&parent, prompt);
    }
    let log = replay(&setup, &parent);
    let two = message_id(&log, "two");

    let child = fork_id(
        &mut client,
        &parent,
        &cwd,
        json!({"hearth": {"fork": {"messageId": two}}}),
    );
    let copied = texts(&replay(&setup, &child));
    assert_eq!(
        copied.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        ["one", "one", "A1"],
        "the prompt, the title it gave, the answer: {copied:?}"
    );
    client.prompt(&child, "aside");
    let parent_before_two = setup.model_messages(1)[..3].to_vec();
    let mut expected = parent_before_two.clone();
    expected.push(json!({"role": "user", "content": "aside"}));
    assert_eq!(setup.model_messages(3), expected);

    // JetBrains names the cut point in its own `_meta`.
    let jb = json!({"jetbrains": {"air": {"fork": {"version": 1, "messageId": two}}}});
    let child = fork_id(&mut client, &parent, &cwd, jb);
    client.prompt(&child, "aside");
    assert_eq!(setup.model_messages(4), expected);
}

#[test]
fn a_fork_of_a_fork_carries_both_histories() {
    let setup = Setup::new(json!({"responses": [text(&["P"]), text(&["F"]), text(&["G"])]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let parent = client.new_session(&cwd);
    client.prompt(&parent, "in the parent");
    let child = fork_id(&mut client, &parent, &cwd, json!({}));
    client.prompt(&child, "in the fork");
    let grandchild = fork_id(&mut client, &child, &cwd, json!({}));
    client.prompt(&grandchild, "in the fork's fork");

    let messages = setup.model_messages(2);
    let users: Vec<&str> = messages[1..]
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        users,
        ["in the parent", "in the fork", "in the fork's fork"]
    );
    let entry = listed(&mut client, &grandchild).unwrap();
    assert_eq!(entry["_meta"]["hearth"]["parentSessionId"], child);
}

#[test]
fn a_bad_fork_is_refused_before_anything_is_written() {
    let setup = Setup::new(json!({"responses": [text(&["A1"])]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let parent = client.new_session(&cwd);
    client.prompt(&parent, "one");

    let unknown = json!({"hearth": {"fork": {"messageId": "msg_never_sent"}}});
    let error = fork(&mut client, &parent, &cwd, unknown)["error"].clone();
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("msg_never_sent")
    );
    let not_a_string = json!({"hearth": {"fork": {"messageId": 7}}});
    assert_eq!(
        fork(&mut client, &parent, &cwd, not_a_string)["error"]["code"],
        -32602
    );
    let relative = fork(&mut client, &parent, "relative/dir", json!({}));
    assert_eq!(relative["error"]["code"], -32602);
    assert!(
        relative["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cwd")
    );
    let missing = fork(&mut client, "sess_missing", &cwd, json!({}));
    assert_eq!(missing["error"]["code"], -32002);
    assert_eq!(missing["error"]["data"]["sessionId"], "sess_missing");

    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1, "{list}");
}

/// What a client sees of the lineage, and that a fork outlives its parent.
#[test]
fn the_list_shows_the_lineage_and_a_deleted_parent_leaves_its_forks() {
    let setup = Setup::new(json!({"responses": [text(&["A1"]), text(&["after"])]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let parent = client.new_session(&cwd);
    client.prompt(&parent, "hello there");
    let mode = json!({"sessionId": parent, "modeId": "plan"});
    client.call("session/set_mode", mode);
    let response = fork(&mut client, &parent, &cwd, json!({}));
    assert_eq!(
        response["result"]["modes"]["currentModeId"], "plan",
        "the parent's settings"
    );
    let child = response["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    let entry = listed(&mut client, &child).unwrap();
    assert_eq!(entry["title"], "hello there (fork)");
    assert_eq!(entry["cwd"], cwd);
    assert_eq!(entry["_meta"]["hearth"]["parentSessionId"], parent);
    assert!(entry["_meta"]["hearth"]["forkedAt"].is_i64(), "{entry}");
    assert!(listed(&mut client, &parent).unwrap().get("_meta").is_none());

    client.call("session/delete", json!({"sessionId": parent}));
    assert!(listed(&mut client, &parent).is_none());
    let orphan = listed(&mut client, &child).unwrap();
    assert!(orphan.get("_meta").is_none(), "no parent left: {orphan}");
    let kept = texts(&replay(&setup, &child));
    assert!(
        kept.contains(&("agent_message_chunk".into(), "A1".into())),
        "{kept:?}"
    );
    let mut client = setup.client();
    let params = json!({"sessionId": child, "cwd": cwd, "mcpServers": []});
    client.call("session/resume", params);
    assert_eq!(
        client.prompt(&child, "still here?")["result"]["stopReason"],
        "end_turn"
    );
    let users = setup
        .model_messages(1)
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(
        users, 2,
        "the parent's prompt is still in the fork's context"
    );
}

/// A fork of a parent whose turn is running copies what is committed: the prompt and the
/// tool call so far. It comes up as an interrupted session does, with the call closed.
#[test]
fn a_fork_mid_turn_copies_what_is_committed() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "run_command", json!({"command": "sleep 30"})),
        text(&["fork goes on"]),
    ]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let parent = client.new_session(&cwd);
    // Ask mode: the call waits for a permission answer that never comes.
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": parent, "prompt": [{"type": "text", "text": "run it"}]}),
    );
    client
        .wait_for(Duration::from_secs(20), |f| {
            f["method"] == "session/request_permission"
        })
        .expect("the call asks first");
    let child = fork_id(&mut client, &parent, &cwd, json!({}));
    assert_eq!(
        client.prompt(&child, "go on")["result"]["stopReason"],
        "end_turn"
    );
    let log = replay(&setup, &child);
    let call = log
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap();
    let statuses: Vec<&Value> = log
        .iter()
        .filter(|u| u["toolCallId"] == call["toolCallId"])
        .map(|u| &u["status"])
        .collect();
    assert_eq!(statuses.last().copied().unwrap(), "failed", "{statuses:?}");
    let results = tool_results(&setup, 1);
    assert_eq!(results.len(), 1, "the open call got a result: {results:?}");
    client.notify("session/cancel", json!({"sessionId": parent}));
    client.response(&prompt);
}

#[test]
fn a_fork_connects_the_servers_its_request_names() {
    let setup = Setup::new(json!({"responses": [
        text(&["A1"]),
        call("c1", "mcp__files__echo", json!({"text": "from the fork"})),
        text(&["done"]),
    ]}));
    let mut client = start(&setup, json!({"mcp": {"startupTimeoutSecs": 10}}));
    let cwd = setup.cwd();
    let parent = client.new_session(&cwd);
    client.prompt(&parent, "one");
    let params = json!({"sessionId": parent, "cwd": cwd, "mcpServers": [mcp_server("files", &[])]});
    let result = client.call("session/fork", params);
    assert_eq!(result["_meta"]["hearth"]["mcpServers"][0]["name"], "files");
    let child = result["sessionId"].as_str().unwrap().to_string();
    assert_eq!(
        client.prompt(&child, "echo")["result"]["stopReason"],
        "end_turn"
    );
    assert!(tool_results(&setup, 2)[0].contains("from the fork"));
}

#[test]
fn set_title_normalises_announces_and_is_never_replaced() {
    let setup = Setup::new(json!({"responses": [text(&["A1"]), text(&["A2"])]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let session = client.new_session(&cwd);

    let response = set_title(&mut client, &session, "  My \n\t title  ");
    assert_eq!(response["result"], json!({"title": "My title"}));
    assert_eq!(
        titles(&client, &session),
        ["My title"],
        "announced before the answer"
    );
    // Named by the user before its first prompt, the session keeps the user's title.
    client.prompt(&session, "what the agent would call it");
    assert_eq!(titles(&client, &session), ["My title"]);
    assert_eq!(listed(&mut client, &session).unwrap()["title"], "My title");

    // A restart keeps the title and whose it is.
    drop(client);
    let mut client = setup.client();
    let params = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
    client.call("session/resume", params);
    client.prompt(&session, "and again");
    assert!(titles(&client, &session).is_empty());
    assert_eq!(listed(&mut client, &session).unwrap()["title"], "My title");
    let replayed: Vec<String> = replay(&setup, &session)
        .iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .map(|u| u["title"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(replayed, ["My title"], "logged like the agent's titles");
}

#[test]
fn set_title_works_on_a_stored_session_and_caps_the_length() {
    let setup = Setup::new(json!({"responses": [text(&["A1"])]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    client.prompt(&session, "first words");
    drop(client);

    let mut client = setup.client();
    let long = "word ".repeat(60);
    let title = set_title(&mut client, &session, &long)["result"]["title"].clone();
    let title = title.as_str().unwrap();
    assert_eq!(title.chars().count(), 160);
    assert!(title.ends_with('…'));
    assert_eq!(listed(&mut client, &session).unwrap()["title"], title);
}

#[test]
fn set_title_refuses_empty_titles_and_unknown_sessions() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    for empty in ["", "  \n\t "] {
        let error = set_title(&mut client, &session, empty)["error"].clone();
        assert_eq!(error["code"], -32602, "{empty:?}: {error}");
    }
    let missing = client.request("session/set_title", json!({"sessionId": session}));
    assert_eq!(missing["error"]["code"], -32602);
    let unknown = set_title(&mut client, "sess_missing", "A title")["error"].clone();
    assert_eq!(unknown["code"], -32002);
    assert_eq!(unknown["data"]["sessionId"], "sess_missing");
    assert!(listed(&mut client, &session).unwrap()["title"].is_null());
}

/// A fork starts with its parent's title, marked, and its own first prompt names it —
/// unless the user named the fork first.
#[test]
fn a_forks_title_is_its_own_first_prompts_unless_the_user_set_one() {
    let setup = Setup::new(json!({"responses": [text(&["A1"]), text(&["A2"]), text(&["A3"])]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let parent = client.new_session(&cwd);
    client.prompt(&parent, "the parent's question");

    let child = fork_id(&mut client, &parent, &cwd, json!({}));
    assert_eq!(
        listed(&mut client, &child).unwrap()["title"],
        "the parent's question (fork)"
    );
    let grandchild = fork_id(&mut client, &child, &cwd, json!({}));
    assert_eq!(
        listed(&mut client, &grandchild).unwrap()["title"],
        "the parent's question (fork)"
    );
    client.prompt(&child, "a side question");
    assert_eq!(titles(&client, &child), ["a side question"]);
    assert_eq!(
        listed(&mut client, &child).unwrap()["title"],
        "a side question"
    );

    set_title(&mut client, &grandchild, "Mine");
    client.prompt(&grandchild, "another question");
    assert_eq!(titles(&client, &grandchild), ["Mine"]);
    assert_eq!(
        listed(&mut client, &parent).unwrap()["title"],
        "the parent's question"
    );
}
