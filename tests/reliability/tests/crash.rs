//! Crash recovery: `kill -9` on `hearth acp` (the real binary, `target/debug/hearth`) at a
//! random point of a tool-using turn, then: the SQLite file passes `PRAGMA integrity_check`,
//! `session/load` replays every update whose frame reached the client — in order, nothing
//! duplicated — and the restored session takes one more prompt whose model context is valid
//! (every tool call answered), even when the kill landed between a call and its result.
//!
//! Bounded: 10 iterations; `HEARTH_RELIABILITY=long`: 100. The random seed is printed.

use std::path::Path;
use std::time::{Duration, Instant};

use hearth_mock_llm::MockLlm;
use hearth_reliability::{
    Rng, brief, build_hearth, check_openai_context, check_replay, config, is_logged, mock, push,
    reset_mock, scale, status_rank, texts_by_message, tool_statuses,
};
use hearth_testkit::{AcpClient, Stdio, agent_text};
use serde_json::{Value, json};

/// One scripted turn: the mock's responses, the full text of each (to check that a replayed
/// message is a prefix of what the model said: nothing duplicated or reordered), and about
/// how many `session/update` frames the whole turn produces.
struct Turn {
    responses: Vec<Value>,
    texts: Vec<String>,
    frames: u64,
}

/// A turn of 1–3 tool-using model answers and a closing one, with stalls between deltas so
/// that a kill lands while text streams, while a command runs, between a tool call and its
/// result, or after the turn ended.
fn scripted_turn(rng: &mut Rng, iteration: usize) -> Turn {
    let mut turn = Turn {
        responses: Vec::new(),
        texts: Vec::new(),
        frames: 1, // the title
    };
    let tool_answers = rng.between(1, 3);
    for r in 0..=tool_answers {
        let mut events = Vec::new();
        let mut text = String::new();
        for k in 0..rng.between(1, 6) {
            let token = format!("<{iteration}.{r}.{k}>");
            text.push_str(&token);
            events.push(json!({"text": token}));
            turn.frames += 1;
            if rng.chance(60) {
                events.push(json!({"stallMs": rng.between(5, 80)}));
            }
        }
        if r < tool_answers {
            for c in 0..rng.between(1, 2) {
                let id = format!("call_{iteration}_{r}_{c}");
                let (name, arguments) = match rng.below(5) {
                    0 | 1 => (
                        "write",
                        json!({"path": format!("out/f{r}_{c}.txt"), "content": format!("iteration {iteration}\n").repeat(rng.between(1, 200) as usize)}),
                    ),
                    2 | 3 => (
                        "run_command",
                        json!({"command": format!("echo start {r}; sleep 0.{}; echo done {r}", rng.between(0, 3))}),
                    ),
                    _ => (
                        "todo",
                        json!({"todos": [{"content": format!("step {r}"), "status": "in_progress"}]}),
                    ),
                };
                turn.frames += if name == "run_command" { 5 } else { 4 };
                events.push(json!({"toolCall": {"id": id, "name": name, "arguments": arguments.to_string(), "chunks": rng.between(1, 4)}}));
                if rng.chance(30) {
                    events.push(json!({"stallMs": rng.between(5, 60)}));
                }
            }
        }
        if rng.chance(50) {
            events.push(json!({"usage": {"input": 100 + r * 10, "output": 7}}));
            turn.frames += 1;
        }
        turn.responses.push(json!({"events": events}));
        turn.texts.push(text);
    }
    turn
}

fn start(config: &str, dir: &Path) -> AcpClient<Stdio> {
    build_hearth();
    let mut client = AcpClient::new(Stdio::start(config, dir, &[("RUST_LOG", Some("error"))]));
    client.initialize();
    client
}

fn integrity(db: &Path) {
    let conn = rusqlite::Connection::open(db).expect("the store opens after kill -9");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok", "PRAGMA integrity_check of {}", db.display());
    let broken_keys: i64 = conn
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(broken_keys, 0, "foreign keys hold after kill -9");
}

/// What one iteration observed, for the summary line.
struct Outcome {
    frames_seen: usize,
    turn_finished: bool,
    open_tool_calls: usize,
}

fn iteration(i: usize, rng: &mut Rng, mock: &MockLlm) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let cwd = workspace.to_str().unwrap().to_string();
    let config = config(mock, dir.path(), json!({"permissionMode": "bypass"}));
    let turn = scripted_turn(rng, i);
    reset_mock(mock);
    push(mock, &turn.responses);

    // Run the turn until the randomly chosen frame, wait a little more, kill -9.
    let mut client = start(&config, dir.path());
    let session = client.new_session(&cwd);
    let prompt_text = format!("go {i}");
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt_text}]}),
    );
    let kill_after = rng.between(1, turn.frames + 2) as usize;
    let linger = match rng.below(3) {
        0 => 0,
        _ => rng.between(1, 40),
    };
    let mut updates = 0;
    let mut turn_finished = false;
    while updates < kill_after {
        let frame = client
            .next(Duration::from_secs(20))
            .unwrap_or_else(|| panic!("iteration {i}: the turn stopped producing frames"));
        if frame["method"] == "session/update" {
            updates += 1;
        }
        if frame.get("id") == Some(&prompt) && frame.get("method").is_none() {
            assert_eq!(
                frame["result"]["stopReason"], "end_turn",
                "iteration {i}: {frame}"
            );
            turn_finished = true;
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(linger));
    client.transport.child.kill().unwrap(); // SIGKILL
    client.transport.child.wait().unwrap();
    // Frames already written to the pipe reached the client too: take them.
    while client.next(Duration::from_millis(300)).is_some() {}
    let live = client.updates(&session);
    let frames_seen = live.len();

    integrity(&dir.path().join("hearth.db"));

    // Restart and replay.
    let mut again = start(&config, dir.path());
    let loaded = again.request(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    assert!(loaded.get("result").is_some(), "iteration {i}: {loaded}");
    let replay = again.updates(&session);
    let context = || format!("iteration {i} (killed after {updates} updates + {linger} ms)");
    if let Err(e) = check_replay(&live, &replay, false) {
        panic!("{}: {e}", context());
    }
    // Text per message: what the client saw is in the replay, and the replay says what the
    // model said, once, in order.
    let seen_texts = texts_by_message(&live);
    let replayed_texts = texts_by_message(&replay);
    for (key, seen) in &seen_texts {
        let replayed = replayed_texts.get(key).map_or("", String::as_str);
        assert!(
            replayed.starts_with(seen.as_str()),
            "{}: message {key:?}: replay {replayed:?} lacks {seen:?}",
            context()
        );
    }
    for (key, replayed) in replayed_texts
        .iter()
        .filter(|(k, _)| k.0 == "agent_message_chunk")
    {
        assert!(
            turn.texts.iter().any(|t| t.starts_with(replayed.as_str())),
            "{}: message {key:?} replays as {replayed:?}, which the model never said",
            context()
        );
    }
    // Tool calls: each announced once, none lost, none gone back in status.
    let (seen_calls, _) = tool_statuses(&live);
    let (replayed_calls, announced) = tool_statuses(&replay);
    for (id, count) in &announced {
        assert_eq!(
            *count,
            1,
            "{}: tool call {id} announced {count} times",
            context()
        );
    }
    for (id, status) in &seen_calls {
        let replayed = replayed_calls
            .iter()
            .find(|(r, _)| r == id)
            .unwrap_or_else(|| {
                panic!(
                    "{}: tool call {id} is missing from the replay {}",
                    context(),
                    brief(&replay)
                )
            });
        assert!(
            status_rank(&replayed.1) >= status_rank(status),
            "{}: tool call {id} was {status} live, replays as {}",
            context(),
            replayed.1
        );
    }
    // The prompt is logged before anything is streamed for it. (The command list, sent after
    // `session/new`'s response, is not of the turn: a kill right after it may precede the
    // prompt's commit.)
    let user_chunks: Vec<&Value> = replay
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .collect();
    assert!(user_chunks.len() <= 1, "{}: {user_chunks:?}", context());
    if live.iter().any(is_logged) {
        assert_eq!(
            user_chunks.first().map(|u| u["content"]["text"].clone()),
            Some(json!(prompt_text)),
            "{}: the prompt is in the log",
            context()
        );
    }
    let open_tool_calls = replayed_calls
        .iter()
        .filter(|(_, s)| status_rank(s) < 2)
        .count();

    // One more prompt on the restored session: the context stays valid.
    reset_mock(mock);
    push(
        mock,
        &[json!({"events": [{"text": "after "}, {"text": "restart"}]})],
    );
    let answer = again.prompt(&session, "are you still there?");
    assert_eq!(
        answer["result"]["stopReason"],
        "end_turn",
        "{}: {answer}",
        context()
    );
    let after: Vec<Value> = again.updates(&session)[replay.len()..].to_vec();
    assert_eq!(agent_text(&after), "after restart", "{}", context());
    let requests = mock.requests();
    assert_eq!(requests.len(), 1, "{}", context());
    let messages = requests[0].body["messages"].as_array().unwrap().clone();
    if let Err(e) = check_openai_context(&messages) {
        panic!("{}: the model context is invalid: {e}", context());
    }
    let users: Vec<&Value> = messages.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(
        users.last().map(|m| m["content"].clone()),
        Some(json!("are you still there?"))
    );
    assert!(users.len() <= 2, "{}: {users:?}", context());

    let status = again.transport.hang_up();
    assert!(status.success(), "{}: exit {status}", context());
    integrity(&dir.path().join("hearth.db"));
    Outcome {
        frames_seen,
        turn_finished,
        open_tool_calls,
    }
}

#[test]
fn kill_9_at_random_points_of_tool_using_turns_loses_nothing_the_client_saw() {
    let iterations = scale(10, 100);
    let mut rng = Rng::from_env("crash");
    let mock = mock(json!({"responses": []}));
    let started = Instant::now();
    let mut finished = 0;
    let mut open_after_crash = 0;
    let mut frames = Vec::new();
    for i in 0..iterations {
        let outcome = iteration(i, &mut rng, &mock);
        finished += usize::from(outcome.turn_finished);
        open_after_crash += usize::from(outcome.open_tool_calls > 0);
        frames.push(outcome.frames_seen);
    }
    eprintln!(
        "crash: {iterations} kills in {:.1?}; {finished} after the turn ended; \
         {open_after_crash} left a tool call without a final status in the replay; \
         updates seen before the kill: {frames:?}",
        started.elapsed()
    );
}

/// Starts `hearth acp` (bypass mode) on a workspace in `dir`, prompts a new session there
/// and kills it with SIGKILL once an update satisfies `running`; checks the store survived.
/// Returns the config, the workspace and the session.
fn killed_while(
    mock: &MockLlm,
    dir: &Path,
    running: impl Fn(&Value) -> bool,
) -> (String, String, String) {
    let workspace = dir.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let cwd = workspace.to_str().unwrap().to_string();
    let config = config(mock, dir, json!({"permissionMode": "bypass"}));
    let mut client = start(&config, dir);
    let session = client.new_session(&cwd);
    client.start_prompt(&session, "run");
    client
        .wait_for(Duration::from_secs(20), |f| running(&f["params"]["update"]))
        .expect("the command runs");
    client.transport.child.kill().unwrap();
    client.transport.child.wait().unwrap();
    integrity(&dir.join("hearth.db"));
    (config, cwd, session)
}

/// A tool call the kill interrupted: the client saw it start (`in_progress`) and never end.
/// After a restart, the replay must not leave it running forever: like a cancelled call, it
/// needs a final status — at the latest once the session goes on.
#[test]
fn a_tool_call_interrupted_by_kill_9_gets_a_final_status_after_restart() {
    let mock = mock(json!({"responses": [
        {"events": [{"text": "Running it."}, {"toolCall": {"id": "call_long", "name": "run_command", "arguments": json!({"command": "sleep 3"}).to_string()}}]},
    ]}));
    let dir = tempfile::tempdir().unwrap();
    let (config, cwd, session) = killed_while(&mock, dir.path(), |update| {
        update["status"] == "in_progress"
    });

    let load = |config: &str| {
        let mut again = start(config, dir.path());
        again.call(
            "session/load",
            json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
        );
        let (calls, _) = tool_statuses(&again.updates(&session));
        (again, calls)
    };
    let (mut again, after_restart) = load(&config);
    push(&mock, &[json!({"events": [{"text": "ok"}]})]);
    assert_eq!(
        again.prompt(&session, "go on")["result"]["stopReason"],
        "end_turn"
    );
    again.transport.hang_up();
    let (_, after_next_prompt) = load(&config);
    eprintln!("after restart: {after_restart:?}; after the next prompt: {after_next_prompt:?}");
    assert_eq!(after_next_prompt.len(), 1);
    assert!(
        status_rank(&after_next_prompt[0].1) == 2,
        "the interrupted call is still `{}` in the replay after a restart and another turn",
        after_next_prompt[0].1
    );
}

/// A subagent running at the kill (its command in progress): after a restart the replay
/// shows its call and the `task` call that ran it as interrupted, never as completed.
#[test]
fn a_subagent_running_at_kill_9_replays_as_interrupted() {
    let task = json!({"description": "Run it", "prompt": "CHILD-K run the command", "subagent_type": "general"});
    let mock = mock(json!({"responses": [
        {"events": [{"toolCall": {"id": "call_task", "name": "task", "arguments": task.to_string()}}]},
        {"when": {"contains": "CHILD-K"}, "events": [{"toolCall": {"id": "call_long", "name": "run_command", "arguments": json!({"command": "sleep 5"}).to_string()}}]},
    ]}));
    let dir = tempfile::tempdir().unwrap();
    let (config, cwd, session) = killed_while(&mock, dir.path(), |update| {
        update["status"] == "in_progress"
            && update.pointer("/_meta/hearth/childSessionId").is_some()
    });

    let mut again = start(&config, dir.path());
    again.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    let replayed = again.updates(&session);
    let (calls, _) = tool_statuses(&replayed);
    assert_eq!(
        calls.len(),
        2,
        "the task call and the child's command: {calls:?}"
    );
    for (id, status) in &calls {
        assert_eq!(status, "failed", "{id} is shown as interrupted: {calls:?}");
    }
    let child_call = replayed
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["name"] == "run_command")
        .expect("the child's call is replayed");
    assert_eq!(child_call["_meta"]["hearth"]["agent"], "general");
    again.transport.hang_up();
}
