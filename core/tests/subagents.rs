//! The `task` tool and its subagents, against the scripted mock: a child's answer reaches the
//! parent model and its tool calls reach the client marked with their `task` call; children
//! in parallel; `explore` and an agent file narrowing the tools and the mode; a child's
//! permission request answered and rejected; cancel mid-child; the limits; replay after a
//! restart; `/undo` of a child's edit. Each child's responses carry a `when` naming its prompt,
//! so that concurrent requests of parent and children each get their own.

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::tools::{always_answer, session, tool_updates, workspace};
use common::{Setup, start, text, tool_results};
use hearth_testkit::processes::{marked_gone, marked_started};
use hearth_testkit::{AcpClient, InProcess, agent_text};
use serde_json::{Value, json};

/// A response in which the model calls `task`.
fn task(id: &str, agent: &str, prompt: &str) -> Value {
    let arguments =
        json!({"description": format!("Ask {agent}"), "prompt": prompt, "subagent_type": agent});
    json!({"events": [{"toolCall": {"id": id, "name": "task", "arguments": arguments.to_string()}}]})
}

/// `response`, for the child whose prompt holds `marker` only.
fn child(marker: &str, mut response: Value) -> Value {
    response["when"] = json!({"contains": marker});
    response
}

/// A response in which the model calls `name`.
fn call(id: &str, name: &str, arguments: Value) -> Value {
    common::call(id, name, arguments)
}

/// A turn delegating to a `general` child (its prompt holds `marker`) that writes `content`
/// to `path`, says "Wrote it." and hands back to the parent, who says "Done.".
fn child_writes(marker: &str, path: &str, content: &str) -> Value {
    json!({"responses": [
        task("p1", "general", &format!("{marker} write {path}")),
        child(marker, call("c1", "write", json!({"path": path, "content": content}))),
        child(marker, text(&["Wrote ", "it."])),
        text(&["Done."]),
    ]})
}

/// The tool names of request `n`.
fn tool_names(setup: &Setup, n: usize) -> Vec<String> {
    let body = &setup.mock.requests()[n].body;
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// The requests whose body holds `marker`, by index.
fn requests_with(setup: &Setup, marker: &str) -> Vec<usize> {
    let requests = setup.mock.requests();
    (0..requests.len())
        .filter(|n| requests[*n].raw.contains(marker))
        .collect()
}

/// The `task` call's id on the wire (its `tool_call`).
fn task_call_ids(client: &AcpClient<InProcess>, session: &str) -> Vec<String> {
    tool_updates(client, session)
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" && u["name"] == "task")
        .map(|u| u["toolCallId"].as_str().unwrap().to_string())
        .collect()
}

/// The updates of calls that a `task` call ran, in order.
fn child_updates(client: &AcpClient<InProcess>, session: &str) -> Vec<Value> {
    tool_updates(client, session)
        .into_iter()
        .filter(|u| u.pointer("/_meta/claudeCode/parentToolUseId").is_some())
        .collect()
}

/// The last update of the call `id`.
fn last_update(client: &AcpClient<InProcess>, session: &str, id: &str) -> Value {
    tool_updates(client, session)
        .into_iter()
        .rfind(|u| u["toolCallId"] == id)
        .unwrap()
}

#[test]
fn a_child_reads_a_file_and_its_answer_reaches_the_parent_with_its_calls_attributed() {
    let setup = Setup::new(json!({"responses": [
        task("p1", "explore", "CHILD-A: what does notes.txt say?"),
        child("CHILD-A", json!({"events": [
            {"toolCall": {"id": "c1", "name": "read", "arguments": json!({"path": "notes.txt"}).to_string()}},
            {"usage": {"input": 1000, "output": 50, "cacheRead": 200}},
        ]})),
        child("CHILD-A", text(&["It says ", "hi there."])),
        text(&["The notes say hi."]),
    ]}));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("notes.txt"), "hi there\n").unwrap();
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    let answer = client.prompt(&session, "ask a subagent what the notes say");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(setup.mock.remaining(), 0);

    // The parent model reads the child's final message, bounded and with the child's id.
    let result = &tool_results(&setup, 3)[0];
    assert!(result.starts_with("task_id: sub_"), "{result}");
    assert!(
        result.contains("<task_result>\nIt says hi there.\n</task_result>"),
        "{result}"
    );
    // The child asked with its own system prompt, a fresh context and explore's tools only.
    let child_messages = setup.model_messages(1);
    let system = child_messages[0]["content"].as_str().unwrap();
    assert!(system.contains("# You are a subagent"), "{system}");
    assert!(system.contains("You are read-only"), "{system}");
    assert_eq!(
        child_messages[1]["content"],
        "CHILD-A: what does notes.txt say?"
    );
    assert_eq!(
        child_messages.len(),
        2,
        "nothing of the parent's conversation"
    );
    assert_eq!(
        tool_names(&setup, 1),
        [
            "read",
            "list",
            "glob",
            "grep",
            "fetch",
            "lsp_diagnostics",
            "lsp_definition",
            "lsp_references"
        ]
    );
    assert!(tool_names(&setup, 0).contains(&"task".to_string()));

    // The client saw the task call (kind think), the child's read marked with it, the child's
    // text as the task call's progress, and the answer as its content.
    let task_id = &task_call_ids(&client, &session)[0];
    let updates = tool_updates(&client, &session);
    let started = updates
        .iter()
        .find(|u| u["toolCallId"] == *task_id)
        .unwrap();
    assert_eq!(started["kind"], "think");
    assert_eq!(started["title"], "Ask explore");
    let children = child_updates(&client, &session);
    assert_eq!(children[0]["sessionUpdate"], "tool_call");
    assert_eq!(children[0]["name"], "read");
    assert_ne!(children[0]["toolCallId"], *task_id);
    let hearth = &children[0]["_meta"]["hearth"];
    assert_eq!(hearth["parentToolCallId"], *task_id);
    assert_eq!(hearth["agent"], "explore");
    assert_eq!(hearth["depth"], 1);
    assert!(
        hearth["childSessionId"]
            .as_str()
            .unwrap()
            .starts_with("sub_")
    );
    assert!(result.contains(hearth["childSessionId"].as_str().unwrap()));
    assert!(
        children
            .iter()
            .all(|u| u["_meta"]["claudeCode"]["parentToolUseId"] == *task_id)
    );
    assert_eq!(children.last().unwrap()["status"], "completed");
    let progress: Vec<&Value> = updates
        .iter()
        .filter(|u| u["toolCallId"] == *task_id && u.get("status").is_none())
        .collect();
    assert!(
        !progress.is_empty(),
        "the child's text streams into the card"
    );
    assert_eq!(
        progress.last().unwrap()["content"][0]["content"]["text"],
        "It says hi there."
    );
    let done = last_update(&client, &session, task_id);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["content"][0]["content"]["text"], "It says hi there.");
    let spent = &done["_meta"]["hearth"]["subagent"];
    assert_eq!(spent["agent"], "explore");
    assert_eq!(spent["requests"], 2);
    assert_eq!(spent["toolCalls"], 1);
    assert_eq!(spent["inputTokens"], 1200);
    assert_eq!(spent["outputTokens"], 50);
    assert_eq!(spent["cachedReadTokens"], 200);
    // The prompt's response counts what the turn's children spent.
    let spent = &answer["result"]["_meta"]["hearth"]["subagents"];
    assert_eq!(spent["inputTokens"], 1200, "{answer}");
    assert_eq!(spent["requests"], 2);
    // The session's context meter is the parent's own: the child's usage is not on it.
    let meters = client.updates(&session);
    assert!(
        !meters.iter().any(|u| u["sessionUpdate"] == "usage_update"),
        "{meters:?}"
    );
    // The child's text is not the parent's message.
    assert_eq!(agent_text(&client.updates(&session)), "The notes say hi.");
    for frame in client.updates(&session) {
        eprintln!("frame: {frame}");
    }
}

/// A child's answer streamed a word at a time, as a model streams it, reaches its `task`
/// call without one update a word: each update carries the whole text so far, so the client
/// gets it at most every 100 ms, and all of it once the answer ends (before: one a word).
#[test]
fn a_childs_streamed_answer_is_reported_in_a_few_updates_ending_with_all_of_it() {
    let words: Vec<String> = (0..100).map(|i| format!("w{i} ")).collect();
    let events: Vec<Value> = words
        .iter()
        .flat_map(|word| [json!({"text": word}), json!({"stallMs": 3})])
        .collect();
    let setup = Setup::new(json!({"responses": [
        task("p1", "explore", "CHILD-L say a lot"),
        child("CHILD-L", json!({ "events": events })),
        text(&["Done."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    let answer = client.prompt(&session, "go");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let task_id = &task_call_ids(&client, &session)[0];
    let progress: Vec<Value> = tool_updates(&client, &session)
        .into_iter()
        .filter(|u| u["toolCallId"] == *task_id && u.get("status").is_none())
        .collect();
    assert!(
        (1..30).contains(&progress.len()),
        "{} updates for {} words",
        progress.len(),
        words.len()
    );
    assert_eq!(
        progress.last().unwrap()["content"][0]["content"]["text"],
        words.concat()
    );
}

#[test]
fn two_tasks_of_one_answer_run_in_parallel_and_max_concurrent_one_queues_them() {
    for (max_concurrent, overlapped) in [(4, true), (1, false)] {
        let both = json!({"events": [
            {"toolCall": {"id": "p1", "name": "task", "arguments": json!({"description": "one", "prompt": "CHILD-1 go"}).to_string()}},
            {"toolCall": {"id": "p2", "name": "task", "arguments": json!({"description": "two", "prompt": "CHILD-2 go"}).to_string()}},
        ]});
        let setup = Setup::new(json!({"responses": [
            both,
            child("CHILD-1", call("c1", "list", json!({}))),
            child("CHILD-1", json!({"events": [{"stallMs": 1500}, {"text": "one done"}]})),
            child("CHILD-2", text(&["two done"])),
            text(&["Both done."]),
        ]}));
        let cwd = workspace(&setup);
        let config = json!({"subagents": {"maxConcurrent": max_concurrent}});
        let mut client = start(&setup, config);
        let session = session(&mut client, &cwd);
        let answer = client.prompt(&session, "do both");
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        let results = tool_results(&setup, 4);
        assert!(results[0].contains("one done"), "{results:?}");
        assert!(results[1].contains("two done"), "{results:?}");
        // Together, child 2 asks while child 1 is still at work; queued, only after it.
        let one = requests_with(&setup, "CHILD-1 go");
        let two = requests_with(&setup, "CHILD-2 go");
        assert_eq!(two[0] < one[1], overlapped, "one {one:?}, two {two:?}");
        assert_eq!(task_call_ids(&client, &session).len(), 2);
    }
}

#[test]
fn explore_has_no_write_tool_and_an_agent_file_narrows_tools_and_mode() {
    let setup = Setup::new(json!({"responses": [
        task("p1", "explore", "CHILD-E write it"),
        child("CHILD-E", call("c1", "write", json!({"path": "x.txt", "content": "x"}))),
        child("CHILD-E", text(&["I cannot write."])),
        task("p2", "scribe", "CHILD-S write it"),
        child("CHILD-S", call("c2", "write", json!({"path": "x.txt", "content": "x"}))),
        child("CHILD-S", text(&["Plan mode refused."])),
        text(&["Neither wrote."]),
    ]}));
    let cwd = workspace(&setup);
    let agents = cwd.join(".hearth/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("scribe.md"),
        "---\ndescription: Writes notes\ntools: read, write, run_command\nmode: plan\n---\nYou write notes.\n",
    )
    .unwrap();
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let session = session(&mut client, &cwd);
    let answer = client.prompt(&session, "write x");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(!cwd.join("x.txt").exists());

    let description = setup.mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "task")
        .unwrap()["function"]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(description.contains("- `explore`: "), "{description}");
    assert!(
        description.contains("- `scribe`: Writes notes"),
        "{description}"
    );
    // explore: the write is no tool of its; scribe: the file's tools, under plan mode.
    let explore = requests_with(&setup, "CHILD-E write it");
    assert!(!tool_names(&setup, explore[0]).contains(&"write".to_string()));
    let scribe = requests_with(&setup, "CHILD-S write it");
    assert_eq!(
        tool_names(&setup, scribe[0]),
        ["read", "write", "run_command"]
    );
    let system = setup.model_messages(scribe[0])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.ends_with("You write notes.\n"), "{system}");
    let results = tool_results(&setup, explore[1]);
    assert!(
        results[0].contains("There is no tool named `write`"),
        "{results:?}"
    );
    let results = tool_results(&setup, scribe[1]);
    assert!(results[0].contains("Plan mode is read-only"), "{results:?}");
    let children = child_updates(&client, &session);
    let failed: Vec<&Value> = children
        .iter()
        .filter(|u| u["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 2, "{children:?}");
    assert_eq!(failed[0]["_meta"]["hearth"]["agent"], "explore");
    assert_eq!(failed[1]["_meta"]["hearth"]["agent"], "scribe");
}

#[test]
fn a_childs_permission_request_goes_through_the_sessions_flow_allowed_or_rejected() {
    for (option, written) in [("allow_once", true), ("reject_once", false)] {
        let setup = Setup::new(child_writes("CHILD-W", "note.txt", "from the child\n"));
        let cwd = workspace(&setup);
        let mut client = start(&setup, json!({}));
        let session = session(&mut client, &cwd);
        let asked = always_answer(&mut client, option);
        let answer = client.prompt(&session, "have a child write a note");
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        // Asked on the client's session, for the child's call the client was shown.
        assert_eq!(asked[0]["sessionId"], session);
        let child_call = &child_updates(&client, &session)[0];
        assert_eq!(asked[0]["toolCall"]["toolCallId"], child_call["toolCallId"]);
        let task_id = &task_call_ids(&client, &session)[0];
        let meta = &asked[0]["toolCall"]["_meta"];
        assert_eq!(meta["claudeCode"]["parentToolUseId"], *task_id);
        assert_eq!(meta["hearth"]["agent"], "general");
        assert_eq!(cwd.join("note.txt").exists(), written);
        let child_result = &tool_results(&setup, 2)[0];
        assert_eq!(
            child_result.contains("rejected"),
            !written,
            "{child_result}"
        );
    }
}

#[test]
fn undo_reverts_a_childs_edit_with_the_turn_that_delegated() {
    let setup = Setup::new(child_writes("CHILD-U", "a.txt", "beta\n"));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("a.txt"), "alpha\n").unwrap();
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let session = session(&mut client, &cwd);
    client.prompt(&session, "rewrite a.txt through a child");
    assert_eq!(
        std::fs::read_to_string(cwd.join("a.txt")).unwrap(),
        "beta\n"
    );
    let undone = client.prompt(&session, "/undo");
    assert_eq!(undone["result"]["stopReason"], "end_turn", "{undone}");
    assert_eq!(
        std::fs::read_to_string(cwd.join("a.txt")).unwrap(),
        "alpha\n"
    );
}

#[test]
fn cancel_mid_child_closes_every_call_and_ends_its_process() {
    let marker = format!("sleep 8{}", std::process::id() % 1000);
    let command = format!("{marker}; echo never");
    let setup = Setup::new(json!({"responses": [
        task("p1", "general", "CHILD-C run it"),
        child("CHILD-C", call("c1", "run_command", json!({"command": command}))),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let session = session(&mut client, &cwd);
    let prompt = client.start_prompt(&session, "go");
    assert!(
        marked_started(&marker, Duration::from_secs(10)),
        "the child's command started"
    );
    client.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    assert!(marked_gone(&marker), "the child's command is gone");
    let updates = tool_updates(&client, &session);
    let ids: std::collections::BTreeSet<&str> = updates
        .iter()
        .map(|u| u["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "the task call and the child's command");
    for id in ids {
        let last = last_update(&client, &session, id);
        assert_eq!(last["status"], "failed", "{id} closed: {last}");
    }
}

#[test]
fn limits_end_a_child_with_an_error_the_parent_model_reads() {
    let setup = Setup::new(json!({"responses": [
        task("p1", "general", "CHILD-L loop"),
        child("CHILD-L", call("c1", "task", json!({"description": "deeper", "prompt": "x"}))),
        child("CHILD-L", call("c2", "list", json!({}))),
        text(&["The child hit its limit."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"subagents": {"maxTurns": 2}}));
    let session = session(&mut client, &cwd);
    let answer = client.prompt(&session, "loop");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    // Depth 1: the child has no `task`; its second request was its last.
    let child = requests_with(&setup, "CHILD-L loop");
    assert!(!tool_names(&setup, child[0]).contains(&"task".to_string()));
    assert!(tool_results(&setup, child[1])[0].contains("There is no tool named `task`"));
    let result = &tool_results(&setup, 3)[0];
    assert!(
        result.contains("The subagent reached its limit of 2 model requests."),
        "{result}"
    );
    let task_id = &task_call_ids(&client, &session)[0];
    assert_eq!(last_update(&client, &session, task_id)["status"], "failed");
    assert_eq!(
        agent_text(&client.updates(&session)),
        "The child hit its limit."
    );
}

#[test]
fn session_load_after_a_restart_replays_the_childs_calls_as_they_went_out() {
    let setup = Setup::new(json!({"responses": [
        task("p1", "explore", "CHILD-R list"),
        child("CHILD-R", call("c1", "list", json!({}))),
        child("CHILD-R", text(&["Listed."])),
        text(&["Done."]),
    ]}));
    let cwd = workspace(&setup);
    let (session, live) = {
        let mut client = start(&setup, json!({}));
        let session = session(&mut client, &cwd);
        client.prompt(&session, "list through a child");
        let live: Vec<Value> = tool_updates(&client, &session)
            .into_iter()
            .filter(|u| u["status"].is_string())
            .collect();
        (session, live)
    };
    let mut client = start(&setup, json!({}));
    let loaded = client.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    assert!(loaded.get("error").is_none(), "{loaded}");
    let replayed: Vec<Value> = tool_updates(&client, &session)
        .into_iter()
        .filter(|u| u["status"].is_string())
        .collect();
    assert_eq!(replayed, live, "the replay is what the client saw live");
    assert!(
        replayed
            .iter()
            .any(|u| u.pointer("/_meta/hearth/agent") == Some(&json!("explore")))
    );
}

/// What a child adds before its first model request, against a plain tool call: the gap
/// from the parent's request to the next request, with a `task` and with a `todo` (a tool
/// that does next to nothing) between (the median of nine turns; printed for the record, not
/// asserted on).
#[test]
fn the_overhead_a_child_adds_before_its_first_request() {
    let gap = |turns: Vec<Value>| {
        let setup = Setup::new(json!({ "responses": turns }));
        let cwd = workspace(&setup);
        let mut client = start(&setup, json!({}));
        let session = session(&mut client, &cwd);
        let mut gaps = Vec::new();
        for _ in 0..9 {
            let before = setup.mock.requests().len();
            let answer = client.prompt(&session, "go");
            assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
            let requests = setup.mock.requests();
            gaps.push(requests[before + 1].at_us - requests[before].at_us);
        }
        assert_eq!(setup.mock.remaining(), 0);
        gaps.sort_unstable();
        gaps[gaps.len() / 2]
    };
    let delegated = gap((0..9)
        .flat_map(|i| {
            let marker = format!("CHILD-O{i} answer");
            [
                task("p", "explore", &marker),
                child(&marker, text(&["ok"])),
                text(&["done"]),
            ]
        })
        .collect());
    let todo = json!({"todos": [{"content": "step", "status": "pending"}]});
    let plain = gap((0..9)
        .flat_map(|_| [call("p", "todo", todo.clone()), text(&["done"])])
        .collect());
    eprintln!(
        "median gap to the next model request: task {delegated} µs, todo {plain} µs; \
         a child adds about {} µs",
        delegated.saturating_sub(plain)
    );
}

/// A client that advertises `subagents` (and forms, for questions), initialized.
fn subagents_client(setup: &Setup, extra: Value) -> AcpClient<InProcess> {
    let mut client = AcpClient::new(InProcess::start(&common::config(setup, extra)));
    client.call(
        "initialize",
        json!({"protocolVersion": 1,
               "clientCapabilities": {"subagents": {}, "elicitation": {"form": {}}},
               "clientInfo": {"name": "subagents-client", "version": "0"}}),
    );
    client
}

/// The `subagent_update`s on `session`.
fn states(client: &AcpClient<InProcess>, session: &str) -> Vec<Value> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "subagent_update")
        .collect()
}

#[test]
fn a_subagents_client_sees_the_child_as_its_own_session_announced_first() {
    let setup = Setup::new(child_writes("CHILD-B", "note.txt", "b\n"));
    let cwd = workspace(&setup);
    let mut client = subagents_client(&setup, json!({}));
    let session = session(&mut client, &cwd);
    let asked = always_answer(&mut client, "allow_once");
    let answer = client.prompt(&session, "write a note through a child");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    let states = states(&client, &session);
    let child = states[0]["sessionId"].as_str().unwrap().to_string();
    let shown: Vec<&Value> = states.iter().map(|s| &s["state"]).collect();
    assert_eq!(
        shown
            .iter()
            .map(|s| s["state"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["running", "requires_action", "running", "idle"]
    );
    assert_eq!(shown[3]["stopReason"], "end_turn");
    assert_eq!(states[0]["description"], "general");
    assert_eq!(states[0]["capabilities"], json!({"cancel": {}}));
    let task_id = &task_call_ids(&client, &session)[0];
    assert_eq!(
        states[0]["_meta"]["claudeCode"]["parentToolUseId"],
        *task_id
    );
    // The announcement comes before any frame naming the child.
    let names_child = |f: &Value| f["params"]["sessionId"] == child;
    let announced = client
        .received
        .iter()
        .position(|f| f["params"]["update"]["sessionUpdate"] == "subagent_update")
        .unwrap();
    let first_named = client.received.iter().position(names_child).unwrap();
    assert!(announced < first_named, "{announced} < {first_named}");
    let frames: Vec<Value> = client.agent_requests("session/request_permission");
    assert_eq!(frames.len(), 1);
    assert_eq!(
        frames[0]["params"]["sessionId"], child,
        "asked on the child's session"
    );
    assert_eq!(asked.lock().unwrap().len(), 1);
    // The child's calls and text are on its own session, none of them on the parent's; the
    // delegated task opens it, as a message from the parent.
    let own = client.updates(&child);
    assert_eq!(own[0]["sessionUpdate"], "session_message");
    assert_eq!(own[0]["senderSessionId"], session);
    assert_eq!(own[0]["recipientSessionId"], child);
    assert_eq!(own[0]["content"][0]["text"], "CHILD-B write note.txt");
    assert!(
        own.iter()
            .any(|u| u["sessionUpdate"] == "tool_call" && u["name"] == "write")
    );
    assert_eq!(agent_text(&own), "Wrote it.");
    assert!(child_updates(&client, &session).is_empty());
    assert_eq!(agent_text(&client.updates(&session)), "Done.");
    assert_eq!(
        std::fs::read_to_string(cwd.join("note.txt")).unwrap(),
        "b\n"
    );
    // Children are never sessions of the list.
    let listed = client.call("session/list", json!({}));
    let ids: Vec<&Value> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["sessionId"])
        .collect();
    assert_eq!(ids, [&json!(session)]);
    for frame in client.updates(&session).iter().chain(&own) {
        eprintln!("frame: {frame}");
    }
}

#[test]
fn a_subagents_client_replays_the_childs_calls_on_its_session_announced_first() {
    let setup = Setup::new(child_writes("CHILD-L", "note.txt", "l\n"));
    let cwd = workspace(&setup);
    let session = {
        let mut client = subagents_client(&setup, json!({}));
        let session = session(&mut client, &cwd);
        always_answer(&mut client, "allow_once");
        client.prompt(&session, "write a note through a child");
        session
    };
    let mut client = subagents_client(&setup, json!({}));
    let loaded = client.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    assert!(loaded.get("error").is_none(), "{loaded}");
    let announced = states(&client, &session);
    assert_eq!(announced.len(), 1, "one announcement, no invented state");
    assert!(announced[0].get("state").is_none(), "{}", announced[0]);
    assert_eq!(announced[0]["description"], "general");
    let child = announced[0]["sessionId"].as_str().unwrap().to_string();
    let first_named = client
        .received
        .iter()
        .position(|f| f["params"]["sessionId"] == child)
        .unwrap();
    let announcement = client
        .received
        .iter()
        .position(|f| f["params"]["update"]["sessionUpdate"] == "subagent_update")
        .unwrap();
    assert!(announcement < first_named, "{announcement} < {first_named}");
    let own = client.updates(&child);
    assert!(
        own.iter()
            .any(|u| u["sessionUpdate"] == "tool_call" && u["name"] == "write"),
        "{own:?}"
    );
    assert!(
        child_updates(&client, &session).is_empty(),
        "none on the parent's"
    );
    assert_eq!(
        task_call_ids(&client, &session).len(),
        1,
        "the task call stays the parent's"
    );
}

#[test]
fn a_subagents_client_cancels_one_child_and_the_parent_turn_goes_on() {
    let setup = Setup::new(json!({"responses": [
        task("p1", "explore", "CHILD-X think long"),
        child("CHILD-X", json!({"events": [{"text": "Thinking"}, {"stallMs": 30000}, {"text": "never"}]})),
        text(&["The child was cancelled; moving on."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = subagents_client(&setup, json!({}));
    let session = session(&mut client, &cwd);
    let prompt = client.start_prompt(&session, "go");
    let thinking = client
        .wait_for(Duration::from_secs(10), |f| {
            f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                && f["params"]["update"]["content"]["text"] == "Thinking"
        })
        .expect("the child streams");
    let child = thinking["params"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(child, session);
    client.notify("session/cancel", json!({"sessionId": child}));
    assert_eq!(client.response(&prompt)["result"]["stopReason"], "end_turn");
    let result = &tool_results(&setup, 2)[0];
    assert!(
        result.starts_with("The subagent was cancelled."),
        "{result}"
    );
    let last = states(&client, &session).pop().unwrap();
    assert_eq!(last["state"]["state"], "idle");
    assert_eq!(last["state"]["stopReason"], "cancelled");
    assert_eq!(
        agent_text(&client.updates(&session)),
        "The child was cancelled; moving on."
    );
}

/// A child's mode is bounded by its parent's as it is at each call: switching the session to
/// `plan` while a child runs refuses the child's next edit.
#[test]
fn switching_the_session_to_plan_restrains_a_running_child() {
    let setup = Setup::new(json!({"responses": [
        task("p1", "general", "CHILD-P write later"),
        child("CHILD-P", json!({"events": [{"text": "Thinking"}, {"stallMs": 1500},
            {"toolCall": {"id": "c1", "name": "write", "arguments": json!({"path": "late.txt", "content": "x"}).to_string()}}]})),
        child("CHILD-P", text(&["Refused."])),
        text(&["Done."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let session = session(&mut client, &cwd);
    let prompt = client.start_prompt(&session, "go");
    client
        .wait_for(Duration::from_secs(10), |f| {
            f["params"]["update"]["content"][0]["content"]["text"] == "Thinking"
        })
        .expect("the child streams");
    client.call(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "plan"}),
    );
    assert_eq!(client.response(&prompt)["result"]["stopReason"], "end_turn");
    assert!(!cwd.join("late.txt").exists());
    let child = requests_with(&setup, "CHILD-P write later");
    let result = &tool_results(&setup, child[1])[0];
    assert!(result.contains("Plan mode is read-only"), "{result}");
}

#[test]
fn a_child_past_its_time_limit_is_cancelled_and_the_parent_reads_why() {
    let setup = Setup::new(json!({"responses": [
        task("p1", "explore", "CHILD-T slow"),
        child("CHILD-T", json!({"events": [{"text": "Starting"}, {"stallMs": 30000}]})),
        text(&["It timed out."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({"subagents": {"timeoutSecs": 1}}));
    let session = session(&mut client, &cwd);
    let answer = client.prompt(&session, "slow");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let result = &tool_results(&setup, 2)[0];
    assert!(
        result.starts_with("The subagent ran out of time (1 s)."),
        "{result}"
    );
    let task_id = &task_call_ids(&client, &session)[0];
    assert_eq!(last_update(&client, &session, task_id)["status"], "failed");
}

/// With `maxDepth: 2` an agent file that lists `task` may delegate in turn: the grandchild's
/// calls are marked with its own `task` call, one level deeper; its answer goes up the chain.
#[test]
fn an_agent_file_listing_task_delegates_one_level_deeper_when_the_depth_allows() {
    delegates_one_level_deeper(json!({"maxDepth": 2}));
}

/// One child at a time: the grandchild still runs while its parent, holding the first
/// level's one slot, waits for it (before, one slot for every depth: it waited until the
/// parent ran out of time).
#[test]
fn a_grandchild_runs_while_its_parent_holds_the_only_slot_of_its_level() {
    delegates_one_level_deeper(json!({"maxDepth": 2, "maxConcurrent": 1, "timeoutSecs": 15}));
}

/// An MCP server's question during a child's call is asked, for a client that shows child
/// sessions, on the child's session and with the child's call, as its permission requests
/// are (before: on the client's session, with a call the client saw on the child's); and
/// the child's state reads `requires_action` while it waits (before: running throughout).
#[test]
fn an_mcp_servers_question_in_a_childs_call_is_asked_on_the_childs_session() {
    let setup = Setup::new(json!({"responses": [
        task("p1", "general", "CHILD-M pick a colour"),
        child("CHILD-M", call("c1", "mcp__files__pick_colour", json!({}))),
        child("CHILD-M", text(&["Picked."])),
        text(&["Done."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = subagents_client(&setup, json!({"permissionMode": "bypass"}));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    client.respond_with(move |method, params| {
        (method == "elicitation/create").then(|| {
            seen.lock().unwrap().push(params.clone());
            json!({"action": "accept", "content": {"colour": "blue"}})
        })
    });
    let created = client.call(
        "session/new",
        json!({"cwd": cwd, "mcpServers": [common::mcp_server("files", &[])]}),
    );
    let session = created["sessionId"].as_str().unwrap().to_string();
    let answer = client.prompt(&session, "pick through a child");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let states = states(&client, &session);
    let child = states[0]["sessionId"].as_str().unwrap().to_string();
    let shown: Vec<&str> = states
        .iter()
        .map(|s| s["state"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(shown, ["running", "requires_action", "running", "idle"]);
    let calls: Vec<Value> = client
        .updates(&child)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .map(|u| u["toolCallId"].clone())
        .collect();
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["sessionId"], child, "asked on the child's session");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(asked[0]["toolCallId"], calls[0], "within the child's call");
    let results = tool_results(&setup, 2);
    assert_eq!(results, ["picked blue"], "the answer reached the server");
}

/// A session whose child (agent `lead`) delegates to a grandchild, which lists the workspace.
fn nested_delegation() -> (Setup, PathBuf) {
    let setup = Setup::new(json!({"responses": [
        task("p1", "lead", "CHILD-1 ask a helper"),
        child("CHILD-1", task("c1", "explore", "GRANDCHILD list it")),
        child("GRANDCHILD", call("g1", "list", json!({}))),
        child("GRANDCHILD", text(&["Two files."])),
        child("CHILD-1", text(&["The helper saw two files."])),
        text(&["Done."]),
    ]}));
    let cwd = workspace(&setup);
    let agents = cwd.join(".hearth/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("lead.md"),
        "---\ndescription: Delegates\ntools: task, read\n---\nDelegate.\n",
    )
    .unwrap();
    (setup, cwd)
}

/// For a client that shows child sessions, a grandchild is announced on the child that
/// delegated to it, and its task is a message from that child — live and replayed.
#[test]
fn a_subagents_client_sees_a_grandchild_under_the_child_that_delegated() {
    let (setup, cwd) = nested_delegation();
    let config = json!({"subagents": {"maxDepth": 2}});
    let (session, live) = {
        let mut client = subagents_client(&setup, config.clone());
        let session = session(&mut client, &cwd);
        let answer = client.prompt(&session, "go deep");
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        let live = announcements(&client, &session);
        (session, live)
    };
    let (child, grandchild) = &live;
    assert_eq!(
        grandchild.len(),
        1,
        "the grandchild is announced once, live"
    );
    let mut client = subagents_client(&setup, config);
    let loaded = client.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    assert!(loaded.get("error").is_none(), "{loaded}");
    let replayed = announcements(&client, &session);
    assert_eq!(&replayed.0, child);
    assert_eq!(replayed.1, *grandchild, "replayed under the same child");
    let calls = client.updates(&grandchild[0]);
    assert!(
        calls
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call" && u["name"] == "list"),
        "{calls:?}"
    );
}

/// The child announced on `session` (only one), and the grandchildren announced on the
/// child's session, after checking that the grandchild's task opens its session as a message
/// from the child.
fn announcements(client: &AcpClient<InProcess>, session: &str) -> (String, Vec<String>) {
    let on_session = states(client, session);
    let ids = |states: &[Value]| -> Vec<String> {
        let mut ids: Vec<String> = states
            .iter()
            .map(|s| s["sessionId"].as_str().unwrap().to_string())
            .collect();
        ids.dedup();
        ids
    };
    let children = ids(&on_session);
    assert_eq!(
        children.len(),
        1,
        "only the child on the client's session: {children:?}"
    );
    let child = children[0].clone();
    let grandchildren = ids(&states(client, &child));
    for grandchild in &grandchildren {
        let opened = &client.updates(grandchild)[0];
        if opened["sessionUpdate"] == "session_message" {
            assert_eq!(opened["senderSessionId"], child, "{opened}");
        }
    }
    (child, grandchildren)
}

fn delegates_one_level_deeper(subagents: Value) {
    let (setup, cwd) = nested_delegation();
    let mut client = start(&setup, json!({ "subagents": subagents }));
    let session = session(&mut client, &cwd);
    let answer = client.prompt(&session, "go deep");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(setup.mock.remaining(), 0);
    let result = &tool_results(&setup, 5)[0];
    assert!(result.contains("The helper saw two files."), "{result}");
    // The child's own `task` call is marked depth 1; the grandchild's `list`, depth 2 under it.
    let task_ids = task_call_ids(&client, &session);
    assert_eq!(task_ids.len(), 2);
    let updates = tool_updates(&client, &session);
    let inner = updates
        .iter()
        .find(|u| u["toolCallId"] == task_ids[1])
        .unwrap();
    assert_eq!(inner["_meta"]["hearth"]["depth"], 1);
    assert_eq!(inner["_meta"]["claudeCode"]["parentToolUseId"], task_ids[0]);
    let list = updates.iter().find(|u| u["name"] == "list").unwrap();
    assert_eq!(list["_meta"]["hearth"]["depth"], 2);
    assert_eq!(list["_meta"]["hearth"]["agent"], "explore");
    assert_eq!(list["_meta"]["claudeCode"]["parentToolUseId"], task_ids[1]);
    // The grandchild has no `task` (depth 2 is the limit), the lead child has it.
    let lead = requests_with(&setup, "CHILD-1 ask a helper");
    assert_eq!(tool_names(&setup, lead[0]), ["read", "task"]);
    let grandchild = requests_with(&setup, "GRANDCHILD list it");
    assert!(!tool_names(&setup, grandchild[0]).contains(&"task".to_string()));
}
