//! Commands end to end: the list (`available_commands_update`) and when it is sent, each
//! built-in, custom command files, MCP prompts, and what reaches the model (or does not).
//! The MCP tests use `tests/mcp/server.py`; `bash tests/mcp/setup.sh` installs it.

mod common;

use std::time::Duration;

use common::{Setup, call, mcp_server, start, text};
use hearth_testkit::{AcpClient, InProcess, agent_text};
use serde_json::{Value, json};

fn engine(setup: &Setup) -> AcpClient<InProcess> {
    start(
        setup,
        json!({"models": [{"id": "mock-model", "name": "Mock"}, {"id": "mock-other", "name": "Other"}]}),
    )
}

fn new_session(client: &mut AcpClient<InProcess>, cwd: &str, servers: Value) -> String {
    let result = client.call("session/new", json!({"cwd": cwd, "mcpServers": servers}));
    result["sessionId"].as_str().unwrap().to_string()
}

/// The command lists `session` was sent, in order.
fn lists(client: &AcpClient<InProcess>, session: &str) -> Vec<Vec<Value>> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "available_commands_update")
        .map(|u| u["availableCommands"].as_array().unwrap().clone())
        .collect()
}

fn names(list: &[Value]) -> Vec<String> {
    list.iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// Waits for the first command list of `session`, and returns it.
fn first_list(client: &mut AcpClient<InProcess>, session: &str) -> Vec<Value> {
    client.wait_for(Duration::from_secs(10), |f| {
        f["params"]["update"]["sessionUpdate"] == "available_commands_update"
    });
    lists(client, session).remove(0)
}

/// Where in `received` the first frame matching `pred` is.
fn position(client: &AcpClient<InProcess>, pred: impl Fn(&Value) -> bool) -> usize {
    client
        .received
        .iter()
        .position(pred)
        .expect("a frame that matches")
}

fn is_list(frame: &Value) -> bool {
    frame["params"]["update"]["sessionUpdate"] == "available_commands_update"
}

/// The text of the user messages of model request `n`.
fn user_texts(setup: &Setup, n: usize) -> Vec<String> {
    setup
        .model_messages(n)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            parts => parts
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str())
                .collect(),
        })
        .collect()
}

/// Sends `text` and returns the updates its turn sent.
fn turn(client: &mut AcpClient<InProcess>, session: &str, text: &str) -> Vec<Value> {
    let before = client.updates(session).len();
    let response = client.prompt(session, text);
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    client.updates(session)[before..].to_vec()
}

/// Sends `text` and returns the agent's answer to it.
fn answer_to(client: &mut AcpClient<InProcess>, session: &str, text: &str) -> String {
    agent_text(&turn(client, session, text))
}

#[test]
fn the_list_comes_after_the_responses_of_new_load_and_resume() {
    let setup = Setup::new(json!({"responses": [text(&["hi"])]}));
    let cwd = setup.cwd();
    let mut client = engine(&setup);
    let session = new_session(&mut client, &cwd, json!([]));
    let list = first_list(&mut client, &session);
    assert_eq!(
        names(&list),
        [
            "help", "compact", "undo", "mcp", "model", "mode", "sandbox", "context", "init"
        ]
    );
    let model = list.iter().find(|c| c["name"] == "model").unwrap();
    assert_eq!(model["input"]["hint"], "<model id>");
    assert!(list.iter().find(|c| c["name"] == "help").unwrap()["input"].is_null());
    let answered = position(&client, |f| f["id"] == 2 && f.get("result").is_some());
    assert!(
        position(&client, is_list) > answered,
        "after the new response"
    );
    client.prompt(&session, "hello");
    drop(client);

    for method in ["session/load", "session/resume"] {
        let mut client = engine(&setup);
        client.call(
            method,
            json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
        );
        first_list(&mut client, &session);
        // `initialize` was request 1.
        let answered = position(&client, |f| f["id"] == 2 && f.get("result").is_some());
        let listed = position(&client, is_list);
        assert!(listed > answered, "{method}: the list after the response");
        if method == "session/load" {
            let replayed = position(&client, |f| {
                f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            });
            assert!(replayed < answered, "the replay before the response");
        }
        assert_eq!(lists(&client, &session).len(), 1, "{method}: sent once");
    }

    // A fork's list follows the fork's response.
    let mut client = engine(&setup);
    let forked = client.call(
        "session/fork",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    let fork = forked["sessionId"].as_str().unwrap().to_string();
    let list = first_list(&mut client, &fork);
    assert_eq!(names(&list)[0], "help");
    let answered = position(&client, |f| f["id"] == 2 && f.get("result").is_some());
    let listed = position(&client, |f| {
        is_list(f) && f["params"]["sessionId"] == json!(fork)
    });
    assert!(
        listed > answered,
        "session/fork: the list after the response"
    );
}

#[test]
fn help_lists_the_commands_without_the_model() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = engine(&setup);
    let session = new_session(&mut client, &setup.cwd(), json!([]));
    first_list(&mut client, &session);
    let answer = answer_to(&mut client, &session, "/help");
    assert!(
        answer.contains("`/compact [what the summary should focus on]`"),
        "{answer}"
    );
    assert!(answer.contains("`/init`"), "{answer}");
    assert!(setup.mock.requests().is_empty(), "no model request");
    drop(client);
    // The answer is logged: a load replays the command (marked) and the answer.
    let mut client = engine(&setup);
    client.call(
        "session/load",
        json!({"sessionId": session, "cwd": setup.cwd(), "mcpServers": []}),
    );
    let replayed = client.updates(&session);
    let prompt = replayed
        .iter()
        .find(|u| u["sessionUpdate"] == "user_message_chunk")
        .unwrap();
    assert_eq!(prompt["content"]["text"], "/help");
    assert_eq!(prompt["_meta"]["hearth"]["command"], true);
    assert_eq!(agent_text(&replayed), answer);
}

#[test]
fn model_and_mode_change_the_config_as_set_config_option_does() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let mut client = engine(&setup);
    let session = new_session(&mut client, &setup.cwd(), json!([]));
    first_list(&mut client, &session);

    let updates = turn(&mut client, &session, "/model mock-other");
    let config = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "config_option_update")
        .expect("a config_option_update");
    let model = config["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .unwrap();
    assert_eq!(model["currentValue"], "mock-other");
    assert_eq!(agent_text(&updates), "Model set to `mock-other`.");

    let answer = answer_to(&mut client, &session, "/model gpt-nonexistent");
    assert!(
        answer.contains("`gpt-nonexistent` is not a model"),
        "{answer}"
    );
    assert!(answer.contains("`mock-model`") && answer.contains("`mock-other`"));

    let updates = turn(&mut client, &session, "/mode plan");
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "plan")
    );
    let answer = answer_to(&mut client, &session, "/mode sideways");
    assert!(answer.contains("`sideways` is not a mode"), "{answer}");
    assert!(answer.contains("`accept_edits`"), "{answer}");
    assert!(setup.mock.requests().is_empty());

    client.prompt(&session, "go");
    assert_eq!(setup.mock.requests()[0].body["model"], "mock-other");
}

#[test]
fn sandbox_says_what_confines_the_sessions_commands_and_follows_its_option() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = start(
        &setup,
        json!({"sandbox": {"writableRoots": ["/opt/cache"], "mcpServers": true}}),
    );
    let session = new_session(&mut client, &setup.cwd(), json!([]));
    first_list(&mut client, &session);

    let answer = answer_to(&mut client, &session, "/sandbox");
    assert!(
        answer.starts_with("Commands run `workspace-write`, network off (backend: "),
        "{answer}"
    );
    assert!(answer.contains("`/opt/cache`"), "{answer}");
    assert!(
        answer.contains("Language servers run in it too; every stdio MCP server does."),
        "{answer}"
    );
    assert!(answer.contains("Permission mode `ask`"), "{answer}");

    client.call(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "sandbox", "value": "off"}),
    );
    let answer = answer_to(&mut client, &session, "/sandbox");
    assert!(
        answer.starts_with("The sandbox is off for this session"),
        "{answer}"
    );
    assert!(setup.mock.requests().is_empty());
}

#[test]
fn init_asks_the_model_for_an_agents_md_and_a_restart_keeps_it_in_context() {
    let setup = Setup::new(json!({"responses": [text(&["Written."]), text(&["Sure."])]}));
    let cwd = setup.cwd();
    let mut client = engine(&setup);
    let session = new_session(&mut client, &cwd, json!([]));
    assert_eq!(
        client.prompt(&session, "/init")["result"]["stopReason"],
        "end_turn"
    );
    let asked = user_texts(&setup, 0);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("AGENTS.md") && asked[0].contains("`write`"));
    assert!(
        !asked[0].contains("/init"),
        "the typed command is not the model's"
    );
    drop(client);
    let mut client = engine(&setup);
    client.call(
        "session/resume",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    client.prompt(&session, "thanks");
    let rebuilt = user_texts(&setup, 1);
    assert_eq!(
        rebuilt[0], asked[0],
        "the restart rebuilds the same context"
    );
    assert_eq!(rebuilt[1], "thanks");
}

#[test]
fn an_unknown_slash_word_is_a_message_and_input_after_a_bare_command_is_prose() {
    let setup = Setup::new(json!({"responses": [text(&["a"]), text(&["b"])]}));
    let mut client = engine(&setup);
    let session = new_session(&mut client, &setup.cwd(), json!([]));
    client.prompt(&session, "/usr/bin is on my PATH");
    assert_eq!(user_texts(&setup, 0), ["/usr/bin is on my PATH"]);
    client.prompt(&session, "/help me with the parser");
    assert_eq!(
        user_texts(&setup, 1).last().unwrap(),
        "/help me with the parser"
    );
}

#[test]
fn custom_commands_expand_their_arguments_and_the_workspace_wins() {
    let setup = Setup::new(json!({"responses": [text(&["Reviewed."]), text(&["Done."])]}));
    let cwd = setup.dir.path().join("project");
    let workspace = cwd.join(".hearth/commands");
    let user = setup.dir.path().join("user-config/commands");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        workspace.join("review.md"),
        "---\ndescription: Review a part of the code\nargument-hint: <part>\n---\nReview $ARGUMENTS carefully.\n",
    )
    .unwrap();
    std::fs::write(user.join("review.md"), "the user's review").unwrap();
    std::fs::write(
        user.join("standup.md"),
        "# Summarize today\nSay what changed.",
    )
    .unwrap();
    let cwd = cwd.to_string_lossy().into_owned();
    let mut client = engine(&setup);
    let session = new_session(&mut client, &cwd, json!([]));
    let list = first_list(&mut client, &session);
    let review = list.iter().find(|c| c["name"] == "review").unwrap();
    assert_eq!(review["description"], "Review a part of the code");
    assert_eq!(review["input"]["hint"], "<part>");
    let standup = list.iter().find(|c| c["name"] == "standup").unwrap();
    assert_eq!(standup["description"], "Summarize today");

    client.prompt(&session, "/review the parser");
    assert_eq!(user_texts(&setup, 0), ["Review the parser carefully."]);

    // A file added later is read on /help, and the list is sent again.
    std::fs::write(workspace.join("later.md"), "Later.").unwrap();
    client.prompt(&session, "/help");
    let lists = lists(&client, &session);
    assert_eq!(lists.len(), 2);
    assert!(names(&lists[1]).contains(&"later".to_string()));
    client.prompt(&session, "/later");
    assert_eq!(user_texts(&setup, 1).last().unwrap(), "Later.");
    drop(client);

    // The replay shows what the user typed, never the expansion.
    let mut client = engine(&setup);
    client.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    let typed: Vec<Value> = client
        .updates(&session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .map(|u| u["content"]["text"].clone())
        .collect();
    assert_eq!(typed, ["/review the parser", "/help", "/later"]);
}

#[test]
fn compact_still_compacts_without_reaching_the_models_context() {
    let setup = Setup::new(json!({"responses": [
        text(&["First answer."]),
        text(&["Goal: test. State: one answer."]),
        text(&["After."]),
    ]}));
    let mut client = engine(&setup);
    let session = new_session(&mut client, &setup.cwd(), json!([]));
    client.prompt(&session, "first");
    assert_eq!(
        client.prompt(&session, "/compact the answer")["result"]["stopReason"],
        "end_turn"
    );
    client.prompt(&session, "next");
    let after = user_texts(&setup, 2);
    assert!(
        after.iter().any(|t| t.contains("Goal: test")),
        "the summary: {after:?}"
    );
    assert!(!after.iter().any(|t| t.contains("/compact")), "{after:?}");
}

/// `/compact` before any conversation asks no model for a summary of nothing (before: the
/// made-up summary was kept as the conversation's past, and billed).
#[test]
fn compact_with_no_conversation_yet_asks_nothing() {
    let setup = Setup::new(json!({"responses": [text(&["Hello."])]}));
    let mut client = engine(&setup);
    let session = new_session(&mut client, &setup.cwd(), json!([]));
    let answer = answer_to(&mut client, &session, "/compact");
    assert_eq!(answer, "Nothing to compact yet: the conversation is empty.");
    assert!(setup.mock.requests().is_empty());
    client.prompt(&session, "hi");
    let sent = user_texts(&setup, 0);
    assert!(!sent.iter().any(|t| t.contains("compacted")), "{sent:?}");
}

#[test]
fn mcp_shows_the_servers_reconnects_them_and_their_prompts_are_commands() {
    let setup = Setup::new(json!({"responses": [text(&["A review."])]}));
    let mut client = engine(&setup);
    let missing = json!({"name": "missing", "command": "/nonexistent/hearth-test-server", "args": [], "env": []});
    let session = new_session(
        &mut client,
        &setup.cwd(),
        json!([mcp_server("files", &[]), missing]),
    );
    // The list grows once `files` is connected and its prompt is known.
    client.wait_for(Duration::from_secs(20), |f| {
        is_list(f)
            && f["params"]["update"]["availableCommands"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == "mcp:files:review")
    });
    let all = lists(&client, &session);
    assert!(all.len() >= 2, "the first list, then the grown one");
    assert!(!names(&all[0]).contains(&"mcp:files:review".to_string()));
    let review = all
        .last()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "mcp:files:review")
        .unwrap()
        .clone();
    assert_eq!(review["input"]["hint"], "<topic> [style]");
    assert_eq!(review["description"], "Ask for a review of a topic.");

    let status = answer_to(&mut client, &session, "/mcp");
    assert!(
        status.contains("- `files`: connected, 11 tools"),
        "{status}"
    );
    assert!(status.contains("- `missing`: failed: "), "{status}");

    let reconnected = answer_to(&mut client, &session, "/mcp reconnect files");
    assert!(
        reconnected.contains("- `files`: connected"),
        "{reconnected}"
    );
    assert!(!reconnected.contains("missing"), "{reconnected}");
    let refused = answer_to(&mut client, &session, "/mcp reconnect nobody");
    assert!(refused.contains("no MCP server `nobody`"), "{refused}");
    let all = answer_to(&mut client, &session, "/mcp reconnect");
    assert!(all.contains("`files`: connected") && all.contains("`missing`: failed"));
    assert!(setup.mock.requests().is_empty(), "no model request so far");

    client.prompt(&session, "/mcp:files:review parser in depth");
    assert_eq!(
        user_texts(&setup, 0),
        ["Review parser (in depth) for files."]
    );
    let refused = answer_to(&mut client, &session, "/mcp:files:review");
    assert!(refused.contains("needs its `topic` argument"), "{refused}");
    assert_eq!(setup.mock.requests().len(), 1);
}

#[test]
fn a_first_prompt_runs_an_mcp_prompt_while_its_server_still_connects() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let mut client = engine(&setup);
    let session = new_session(&mut client, &setup.cwd(), json!([mcp_server("files", &[])]));
    client.prompt(&session, "/mcp:files:review parser");
    assert_eq!(user_texts(&setup, 0), ["Review parser (brief) for files."]);
}

#[test]
fn a_model_turn_after_commands_calls_tools_as_usual() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "write", json!({"path": "AGENTS.md", "content": "# Notes\n"})),
        text(&["Wrote AGENTS.md."]),
    ]}));
    let path = setup.dir.path().join("AGENTS.md");
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let session = new_session(&mut client, &setup.cwd(), json!([]));
    client.prompt(&session, "/init");
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written, "# Notes\n");
}
