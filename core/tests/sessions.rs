//! The session lifecycle and the store: new, list, load, resume, close, delete, lazy
//! restore after a restart, unknown ids.

mod common;

use std::time::Duration;

use common::{Setup, text};
use hearth_testkit::{AcpClient, InProcess, Transport, absolute, agent_text};
use serde_json::{Value, json};

fn load<T: Transport>(client: &mut AcpClient<T>, session: &str, cwd: &str) -> Value {
    client.request(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    )
}

#[test]
fn load_replays_the_log_before_answering() {
    let setup = Setup::new(json!({"responses": [
        {"events": [{"reasoning": "hmm"}, {"text": "Hi "}, {"text": "there"}]},
        text(&["Second"]),
    ]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let session = client.new_session(&cwd);
    client.prompt(&session, "hello");
    client.prompt(&session, "again");
    let live = client.updates(&session);

    let mut fresh = setup.client();
    let before = fresh.received.len();
    let response = load(&mut fresh, &session, &cwd);
    assert_eq!(response["result"]["modes"]["currentModeId"], "ask");
    assert_eq!(
        response["result"]["configOptions"][0]["currentValue"],
        "mock-model"
    );
    let replay: Vec<Value> = fresh.received[before..fresh.received.len() - 1]
        .iter()
        .map(|f| {
            assert_eq!(
                f["method"], "session/update",
                "only updates precede the answer"
            );
            f["params"]["update"].clone()
        })
        .collect();
    let kinds: Vec<&str> = replay
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "session_info_update",
            "agent_thought_chunk",
            "agent_message_chunk",
            "user_message_chunk",
            "agent_message_chunk"
        ],
        "streamed chunks replay as one chunk per message"
    );
    assert_eq!(agent_text(&replay), agent_text(&live));
    assert_eq!(replay[0]["content"]["text"], "hello");
    assert_eq!(
        replay[3]["messageId"],
        live.iter()
            .find(|u| u["sessionUpdate"] == "agent_message_chunk")
            .unwrap()["messageId"]
    );
}

/// An in-process engine that also keeps every frame it sent, as the bytes it sent.
struct Recorded {
    engine: InProcess,
    frames: Vec<String>,
}

impl Transport for Recorded {
    fn send(&mut self, frame: &str) {
        self.engine.send(frame);
    }
    fn recv(&mut self, timeout: Duration) -> Option<String> {
        let frame = self.engine.recv(timeout)?;
        self.frames.push(frame.clone());
        Some(frame)
    }
}

fn recorded(setup: &Setup) -> AcpClient<Recorded> {
    let mut client = AcpClient::new(Recorded {
        engine: InProcess::start(&setup.config()),
        frames: Vec::new(),
    });
    client.initialize();
    client
}

/// The update of a `session/update` frame, if `frame` is one.
fn update_of(frame: &str) -> Option<Value> {
    let frame: Value = serde_json::from_str(frame).unwrap();
    (frame["method"] == "session/update").then(|| frame["params"]["update"].clone())
}

/// Live frames as a replay shows them: consecutive text chunks of one message as one frame.
fn fold_chunks(frames: &[String]) -> Vec<String> {
    let mut folded: Vec<(String, Value)> = Vec::new();
    for frame in frames {
        let parsed: Value = serde_json::from_str(frame).unwrap();
        let update = &parsed["params"]["update"];
        let is_chunk = update["sessionUpdate"] == "agent_message_chunk"
            || update["sessionUpdate"] == "agent_thought_chunk";
        if let Some((text, last)) = folded.last_mut() {
            let previous = &mut last["params"]["update"];
            if is_chunk
                && previous["sessionUpdate"] == update["sessionUpdate"]
                && previous["messageId"] == update["messageId"]
            {
                let more = update["content"]["text"].as_str().unwrap();
                let joined = format!("{}{more}", previous["content"]["text"].as_str().unwrap());
                previous["content"]["text"] = joined.into();
                *text = last.to_string();
                continue;
            }
        }
        folded.push((frame.clone(), parsed));
    }
    folded.into_iter().map(|(text, _)| text).collect()
}

#[test]
fn replay_sends_the_bytes_the_client_saw() {
    let todo = json!({"todos": [{"content": "say \"hi\" — ünïcode\n", "status": "in_progress"}]});
    // The stalls put the chunks of one message in different store batches, hence rows.
    let setup = Setup::new(json!({"responses": [
        {"events": [
            {"reasoning": "Let me "}, {"stallMs": 30}, {"reasoning": "think"},
            {"text": "On it: "}, {"stallMs": 30}, {"text": "a \"plan\"\t"},
            {"toolCall": {"id": "t", "name": "todo", "arguments": todo.to_string()}},
        ]},
        {"events": [{"text": "Done"}, {"stallMs": 30}, {"text": "."}]},
        text(&["Second ", "answer"]),
    ]}));
    let cwd = setup.cwd();
    let mut client = recorded(&setup);
    let session = client.new_session(&cwd);
    let start = client.transport.frames.len();
    client.prompt(&session, "plan it");
    client.prompt(&session, "again");
    // The command list is state, not history: it is never replayed.
    let live: Vec<String> = client.transport.frames[start..]
        .iter()
        .filter(|f| update_of(f).is_some_and(|u| u["sessionUpdate"] != "available_commands_update"))
        .cloned()
        .collect();
    assert!(
        live.iter().any(|f| f.contains(r#""sessionUpdate":"plan""#)),
        "the turn made a plan"
    );

    let mut fresh = recorded(&setup);
    let before = fresh.transport.frames.len();
    load(&mut fresh, &session, &cwd);
    let frames = &fresh.transport.frames[before..];
    let (answer, replayed) = frames.split_last().unwrap();
    assert!(update_of(answer).is_none(), "the answer comes last");
    // The prompts are replayed too, though the client never got them as updates.
    let (prompts, seen): (Vec<String>, Vec<String>) = replayed
        .iter()
        .cloned()
        .partition(|f| update_of(f).unwrap()["sessionUpdate"] == "user_message_chunk");
    assert_eq!(prompts.len(), 2);
    assert_eq!(seen, fold_chunks(&live));
}

#[test]
fn resume_restores_without_replay_and_the_context_is_kept() {
    let setup = Setup::new(json!({"responses": [text(&["42"]), text(&["Yes"])]}));
    let cwd = setup.cwd();
    let session = {
        let mut client = setup.client();
        let session = client.new_session(&cwd);
        client.prompt(&session, "the answer?");
        session
    };
    let mut client = setup.client();
    let response = client.request("session/resume", json!({"sessionId": session, "cwd": cwd}));
    assert_eq!(response["result"]["modes"]["currentModeId"], "ask");
    assert!(
        client.updates(&session).is_empty(),
        "resume replays nothing"
    );
    assert_eq!(
        client.prompt(&session, "sure?")["result"]["stopReason"],
        "end_turn"
    );
    let messages = setup.model_messages(1);
    assert_eq!(
        messages[2]["content"], "42",
        "the restored session remembers"
    );
}

#[test]
fn a_restarted_engine_restores_a_session_on_any_request() {
    let setup = Setup::new(json!({"responses": [text(&["first"]), text(&["second"])]}));
    let cwd = setup.cwd();
    let session = {
        let mut client = setup.client();
        let session = client.new_session(&cwd);
        client.prompt(&session, "one");
        session
    }; // engine dropped: closed and flushed
    let mut client = setup.client();
    // No load, no resume: the prompt alone brings the session back.
    assert_eq!(
        client.prompt(&session, "two")["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(setup.model_messages(1)[2]["content"], "first");
    let listed = client.call("session/list", json!({}));
    assert_eq!(listed["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(listed["sessions"][0]["title"], "one");
}

/// A context of more rows than the restore reads at once (1,000 a page): brought back whole
/// and in order, so the first request after a restart continues the last one before it.
#[test]
fn a_restart_restores_a_context_longer_than_a_page() {
    const PROMPTS: usize = 600;
    let answers: Vec<Value> = (0..=PROMPTS).map(|i| text(&[&format!("a{i}")])).collect();
    let setup = Setup::new(json!({ "responses": answers }));
    let cwd = setup.cwd();
    let (session, before) = {
        let mut client = setup.client();
        let session = client.new_session(&cwd);
        for i in 0..PROMPTS {
            client.prompt(&session, &format!("q{i}"));
        }
        (session, setup.mock.last_request().unwrap().body)
    };
    let mut client = setup.client();
    client.prompt(&session, "again");
    let after = setup.mock.last_request().unwrap().body;
    let (before, after) = (
        before["messages"].as_array().unwrap(),
        after["messages"].as_array().unwrap(),
    );
    assert!(before.len() >= 1_200, "{} messages", before.len());
    assert_eq!(after.len(), before.len() + 2);
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after[before.len()]["content"], format!("a{}", PROMPTS - 1));
}

#[test]
fn close_keeps_the_session_and_delete_removes_it() {
    let setup = Setup::new(json!({"responses": [text(&["a"]), text(&["b"])]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let session = client.new_session(&cwd);
    client.prompt(&session, "hi");
    assert_eq!(
        client.call("session/close", json!({"sessionId": session})),
        json!({})
    );
    // Closed is not gone: the next request restores it.
    assert_eq!(
        client.prompt(&session, "back")["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(
        client.call("session/delete", json!({"sessionId": session})),
        json!({})
    );
    let listed = client.call("session/list", json!({}));
    assert_eq!(listed["sessions"], json!([]));
    for (method, params) in [
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "x"}]}),
        ),
        (
            "session/load",
            json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
        ),
        ("session/resume", json!({"sessionId": session, "cwd": cwd})),
        ("session/close", json!({"sessionId": session})),
    ] {
        let error = client.call_err(method, params);
        assert_eq!(error["code"], -32002, "{method}: {error}");
        assert_eq!(error["data"]["sessionId"], session.as_str(), "{method}");
    }
    // Deleting again, or deleting what never existed, succeeds.
    assert_eq!(
        client.call("session/delete", json!({"sessionId": session})),
        json!({})
    );
    assert_eq!(
        client.call("session/delete", json!({"sessionId": "sess_never"})),
        json!({})
    );
}

#[test]
fn close_cancels_a_running_turn_first() {
    let setup = Setup::new(json!({"responses": [{"events": [{"text": "x"}, {"stallMs": 30000}]}]}));
    let mut client = setup.client();
    let session = client.new_session(&setup.cwd());
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    client.wait_for(Duration::from_secs(10), |f| {
        f["method"] == "session/update"
            && f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    });
    let close = client.start_request("session/close", json!({"sessionId": session}));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    assert_eq!(client.response(&close)["result"], json!({}));
    let prompt_at = client
        .received
        .iter()
        .position(|f| f["id"] == prompt)
        .unwrap();
    let close_at = client
        .received
        .iter()
        .position(|f| f["id"] == close)
        .unwrap();
    assert!(prompt_at < close_at, "the turn answers before close does");
}

#[test]
fn list_filters_by_cwd_and_pages() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = setup.client();
    let mut created = Vec::new();
    for i in 0..120 {
        let cwd = if i % 3 == 0 {
            "/projects/a"
        } else {
            "/projects/b"
        };
        created.push(client.new_session(&absolute(cwd)));
    }
    let mut seen = Vec::new();
    let mut updated = std::collections::HashMap::new();
    let mut cursor = Value::Null;
    loop {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let page = client.call("session/list", params);
        let sessions = page["sessions"].as_array().unwrap();
        assert!(sessions.len() <= 50);
        for s in sessions {
            let id = s["sessionId"].as_str().unwrap().to_string();
            updated.insert(id.clone(), s["updatedAt"].as_str().unwrap().to_string());
            seen.push(id);
        }
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    let mut expected = created.clone();
    expected.sort();
    let mut got = seen.clone();
    got.sort();
    assert_eq!(got, expected, "every session exactly once across pages");
    // Newest first across every page. Sessions made within one millisecond tie, and a tie is
    // broken by id, not by creation order: compare times, not ids.
    let times: Vec<&String> = seen.iter().map(|id| &updated[id]).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first");
    assert_eq!(
        times[0],
        &updated[created.last().unwrap()],
        "the newest leads"
    );

    let only_a = client.call("session/list", json!({"cwd": absolute("/projects/a")}));
    assert_eq!(only_a["sessions"].as_array().unwrap().len(), 40);
    assert!(
        only_a["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["cwd"] == absolute("/projects/a").as_str())
    );
    let error = client.call_err("session/list", json!({"cursor": "garbage"}));
    assert_eq!(error["code"], -32602);
}

#[test]
fn additional_directories_are_kept_and_replaced_on_load() {
    let setup = Setup::new(json!({"responses": [text(&["ok"])]}));
    let mut client = setup.client();
    let created = client.call(
        "session/new",
        json!({"cwd": absolute("/w/main"), "additionalDirectories": [absolute("/w/lib")], "mcpServers": []}),
    );
    let session = created["sessionId"].as_str().unwrap().to_string();
    let listed = client.call("session/list", json!({}));
    assert_eq!(
        listed["sessions"][0]["additionalDirectories"],
        json!([absolute("/w/lib")])
    );
    let error = client.call_err(
        "session/new",
        json!({"cwd": absolute("/w"), "additionalDirectories": ["rel"], "mcpServers": []}),
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("additionalDirectories[0]"),
        "{error}"
    );

    client.call("session/load", json!({"sessionId": session, "cwd": absolute("/w/moved"), "additionalDirectories": [], "mcpServers": []}));
    let listed = client.call("session/list", json!({}));
    assert_eq!(listed["sessions"][0]["cwd"], absolute("/w/moved"));
    assert!(listed["sessions"][0].get("additionalDirectories").is_none());
    client.prompt(&session, "where am I?");
    assert!(
        setup.model_messages(0)[0]["content"]
            .as_str()
            .unwrap()
            .contains(&absolute("/w/moved"))
    );
}

#[test]
fn an_in_memory_store_works_and_keeps_nothing() {
    let setup = Setup::new(json!({"responses": [text(&["mem"])]}));
    // Set as JSON, not by replacing text: a Windows data dir's backslashes are escaped there.
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["dataDir"] = json!(":memory:");
    let config = config.to_string();
    let mut client = AcpClient::new(InProcess::start(&config));
    client.initialize();
    let session = client.new_session(&absolute("/tmp"));
    assert_eq!(
        client.prompt(&session, "hi")["result"]["stopReason"],
        "end_turn"
    );
    let mut replay = AcpClient::new(InProcess::start(&config));
    replay.initialize();
    assert_eq!(
        replay.call("session/list", json!({}))["sessions"],
        json!([])
    );
}

/// `session/list` answers a repeated request from the last answer only while nothing was
/// committed: a session made by this engine, or by another engine on the same file (another
/// `hearth acp` of the same user), shows in the next list.
#[test]
fn a_repeated_list_sees_every_commit_since_the_last() {
    let setup = Setup::new(json!({"responses": []}));
    let (mut client, mut other) = (setup.client(), setup.client());
    let cwd = setup.cwd();
    let ids = |listed: Value| -> Vec<String> {
        let sessions = listed["sessions"].as_array().unwrap().iter();
        sessions
            .map(|s| s["sessionId"].as_str().unwrap().to_string())
            .collect()
    };
    let first = client.new_session(&cwd);
    assert_eq!(
        ids(client.call("session/list", json!({}))),
        std::slice::from_ref(&first)
    );
    assert_eq!(
        ids(client.call("session/list", json!({}))),
        std::slice::from_ref(&first)
    );
    let elsewhere = other.new_session(&cwd);
    let listed = ids(client.call("session/list", json!({})));
    assert!(
        listed.contains(&first) && listed.contains(&elsewhere),
        "{listed:?}"
    );
    let own = client.new_session(&cwd);
    assert_eq!(ids(client.call("session/list", json!({}))).len(), 3);
    assert_eq!(
        client.call("session/delete", json!({"sessionId": own})),
        json!({})
    );
    assert_eq!(ids(client.call("session/list", json!({}))).len(), 2);
}

/// A relative `cwd` filter is refused as every method that takes a `cwd` refuses one, naming
/// the field; a filter spelled with a trailing separator or a `.` finds the sessions of its
/// directory, whichever way they were opened.
#[test]
fn list_refuses_a_relative_cwd_and_spells_paths_one_way() {
    let setup = Setup::new(json!({"responses": []}));
    let mut client = setup.client();
    let sep = std::path::MAIN_SEPARATOR;
    let plain = client.new_session(&absolute("/projects/a"));
    let slashed = client.new_session(&format!("{}{sep}", absolute("/projects/a")));
    client.new_session(&absolute("/projects/b"));
    let error = client.call_err("session/list", json!({"cwd": "projects/a"}));
    assert_eq!(error["code"], -32602);
    assert!(
        error["message"].as_str().unwrap().contains("`cwd`"),
        "{error}"
    );
    for filter in [
        absolute("/projects/a"),
        format!("{}{sep}", absolute("/projects/a")),
        absolute("/projects/./a"),
    ] {
        let listed = client.call("session/list", json!({"cwd": filter}));
        let mut ids: Vec<&str> = listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                assert_eq!(s["cwd"], absolute("/projects/a").as_str());
                s["sessionId"].as_str().unwrap()
            })
            .collect();
        ids.sort();
        let mut expected = [plain.as_str(), slashed.as_str()];
        expected.sort();
        assert_eq!(ids, expected, "{filter}");
    }
}

/// The updates `client` received since it had received `before` frames.
fn updates_since<T: Transport>(client: &AcpClient<T>, before: usize) -> Vec<Value> {
    client.received[before..]
        .iter()
        .filter(|f| f["method"] == "session/update")
        .map(|f| f["params"]["update"].clone())
        .collect()
}

/// Statuses of tool call `id` in `updates`, in order (of every call, for `None`).
fn statuses_of(updates: &[Value], id: Option<&str>) -> Vec<String> {
    updates
        .iter()
        .filter(|u| u["toolCallId"].is_string() && id.is_none_or(|id| u["toolCallId"] == id))
        .filter_map(|u| u["status"].as_str().map(str::to_string))
        .collect()
}

/// The `running_turns` rows of `session`: the engines the store says run one of its turns.
fn running_turns(setup: &Setup, session: &str) -> Vec<String> {
    let db = rusqlite::Connection::open(setup.dir.path().join("hearth.db")).unwrap();
    db.prepare("SELECT engine FROM running_turns WHERE session_id = ?1")
        .unwrap()
        .query_map([session], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

const INTERRUPTED: &str = "Interrupted: Hearth stopped before this tool call finished.";

/// Two engines on one data dir (two `hearth acp` of one user): loading a session whose turn
/// runs in the other engine replays its open call as it is, writes nothing for it and leaves
/// the turn recorded as running; the call then ends as the running engine ends it, and the log
/// never shows it failed.
#[test]
fn a_load_leaves_alone_a_turn_another_live_engine_runs() {
    let setup = Setup::new(json!({"responses": [
        common::call("c1", "write", json!({"path": "z.txt", "content": "z"})),
        text(&["done"]),
    ]}));
    let (mut running, mut other) = (setup.client(), setup.client());
    let cwd = setup.cwd();
    let session = running.new_session(&cwd);
    let prompt = running.start_prompt(&session, "write z");
    let asked = running
        .wait_for(Duration::from_secs(20), |f| {
            f["method"] == "session/request_permission"
        })
        .expect("the write asks first");
    assert_eq!(running_turns(&setup, &session).len(), 1);

    load(&mut other, &session, &cwd);
    let replayed = statuses_of(&other.updates(&session), None);
    assert_eq!(replayed, ["pending"], "the live call replays as it is");
    assert_eq!(running_turns(&setup, &session).len(), 1, "still running");

    running.answer(
        &asked,
        json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}),
    );
    assert_eq!(
        running.response(&prompt)["result"]["stopReason"],
        "end_turn"
    );
    assert!(running_turns(&setup, &session).is_empty());
    let mut later = setup.client();
    load(&mut later, &session, &cwd);
    let replayed = statuses_of(&later.updates(&session), None);
    assert_eq!(replayed.last().map(String::as_str), Some("completed"));
    assert!(!replayed.contains(&"failed".to_string()), "{replayed:?}");
}

/// A turn recorded by an engine that is alive — its lock in the data dir held — is left alone
/// by a load; once that engine is gone (the lock free, as the OS leaves it when a process is
/// killed), the next load of the same live session closes its open call. A turn an older
/// Hearth recorded (the flag alone, no engine) is closed as it always was.
#[test]
fn a_turn_is_closed_once_the_engine_running_it_is_gone() {
    let setup = Setup::new(json!({"responses": [text(&["one"])]}));
    let mut client = setup.client();
    let cwd = setup.cwd();
    let session = client.new_session(&cwd);
    client.prompt(&session, "hello");
    let old = client.new_session(&cwd);
    // Another process's engine: a turn of it with a call open, and its lock held.
    let engines = setup.dir.path().join("engines");
    std::fs::create_dir_all(&engines).unwrap();
    let lock = std::fs::File::create(engines.join("engine_elsewhere.lock")).unwrap();
    lock.lock().unwrap();
    let db = rusqlite::Connection::open(setup.dir.path().join("hearth.db")).unwrap();
    db.busy_timeout(Duration::from_secs(5)).unwrap();
    let open_call = |session: &str| {
        let update = json!({"sessionUpdate": "tool_call", "toolCallId": "c9", "title": "Write z.txt", "kind": "edit", "status": "pending"});
        db.execute(
            "INSERT INTO events (session_id, kind, at, update_json) VALUES (?1, 'tool_call', '2030-01-01T00:00:00.000Z', ?2)",
            [session, &update.to_string()],
        )
        .unwrap();
    };
    open_call(&session);
    db.execute(
        "INSERT INTO running_turns (session_id, engine) VALUES (?1, 'engine_elsewhere')",
        [&session],
    )
    .unwrap();
    open_call(&old);
    db.execute("UPDATE sessions SET turn_running = 1 WHERE id = ?1", [&old])
        .unwrap();

    load(&mut client, &session, &cwd);
    assert_eq!(
        statuses_of(&client.updates(&session), Some("c9")),
        ["pending"]
    );
    assert_eq!(running_turns(&setup, &session), ["engine_elsewhere"]);
    drop(lock);
    let before = client.received.len();
    load(&mut client, &session, &cwd);
    let replayed = updates_since(&client, before);
    assert_eq!(statuses_of(&replayed, Some("c9")), ["pending", "failed"]);
    let closed = replayed.iter().find(|u| u["status"] == "failed").unwrap();
    assert_eq!(closed["content"][0]["content"]["text"], INTERRUPTED);
    assert!(running_turns(&setup, &session).is_empty());
    assert!(!engines.join("engine_elsewhere.lock").exists(), "swept");

    load(&mut client, &old, &cwd);
    assert_eq!(
        statuses_of(&client.updates(&old), Some("c9")),
        ["pending", "failed"]
    );
    let flag: bool = db
        .query_row(
            "SELECT turn_running FROM sessions WHERE id = ?1",
            [&old],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!flag);
}

/// A session live in two engines: a turn one of them ran after the other loaded it reaches
/// the other's model context when the other loads it again, as its replay shows it, so the
/// other's next turn continues the conversation the log holds.
#[test]
fn a_load_takes_in_what_another_engine_added_to_a_live_session() {
    let setup = Setup::new(json!({"responses": [
        text(&["answer-one"]),
        text(&["answer-two"]),
        text(&["answer-three"]),
    ]}));
    let (mut first, mut second) = (setup.client(), setup.client());
    let cwd = setup.cwd();
    let session = first.new_session(&cwd);
    first.prompt(&session, "one");
    load(&mut second, &session, &cwd);
    first.prompt(&session, "two");
    let before = second.received.len();
    load(&mut second, &session, &cwd);
    assert!(agent_text(&updates_since(&second, before)).contains("answer-two"));
    assert_eq!(
        second.prompt(&session, "three")["result"]["stopReason"],
        "end_turn"
    );
    let said: Vec<String> = setup
        .model_messages(2)
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            parts => (parts.as_array().into_iter().flatten())
                .filter_map(|p| p["text"].as_str())
                .collect(),
        })
        .collect();
    assert_eq!(
        said,
        ["one", "answer-one", "two", "answer-two", "three"],
        "the second engine's request holds the first's turn"
    );
}
