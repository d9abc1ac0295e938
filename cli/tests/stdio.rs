//! `hearth acp` as a real child process: the stdio host, its flags, its errors, and what a
//! `kill -9` leaves behind.

use std::process::{Command, Stdio as Pipe};
use std::time::{Duration, Instant};

use hearth_mock_llm::{MockLlm, Script};
use hearth_testkit::{AcpClient, Stdio, absolute, agent_text, cargo_bin};
use serde_json::{Value, json};

fn mock(script: Value) -> MockLlm {
    MockLlm::start(serde_json::from_value::<Script>(script).unwrap()).unwrap()
}

fn config(mock: &MockLlm, dir: &std::path::Path) -> String {
    json!({"dataDir": dir, "model": "mock-model", "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "k"}}})
        .to_string()
}

fn hearth(config: &str, dir: &std::path::Path) -> AcpClient<Stdio> {
    AcpClient::new(Stdio::start(config, dir, &[("RUST_LOG", Some("debug"))]))
}

#[test]
fn a_full_session_over_stdio_then_eof_exits_cleanly() {
    let mock = mock(json!({"responses": [{"events": [{"text": "Hi"}, {"text": "!"}]}]}));
    let dir = tempfile::tempdir().unwrap();
    // RUST_LOG=debug: whatever is logged must stay off stdout (every line is validated).
    let mut client = hearth(&config(&mock, dir.path()), dir.path());
    client.initialize();
    let session = client.new_session(&absolute("/tmp"));
    assert_eq!(
        client.prompt(&session, "hello")["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(agent_text(&client.updates(&session)), "Hi!");
    let status = client.transport.hang_up();
    assert!(status.success(), "EOF on stdin exits 0, got {status}");
}

/// Frames are bytes ending in `\n` alone, on every OS: Rust's stdout translates nothing (on
/// Windows a pipe gets the bytes as written), and a client splitting on `\n` must not be
/// handed a `\r` at the end of every frame.
#[test]
fn frames_end_in_a_bare_newline() {
    let mock = mock(json!({"responses": []}));
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("c.json");
    std::fs::write(&config_path, config(&mock, dir.path())).unwrap();
    let frames = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": dir.path(), "mcpServers": []}}),
    ];
    let input: String = frames.iter().map(|frame| format!("{frame}\n")).collect();
    let mut child = Command::new(cargo_bin("hearth"))
        .args(["acp", "--config"])
        .arg(&config_path)
        .stdin(Pipe::piped())
        .stdout(Pipe::piped())
        .stderr(Pipe::piped())
        .spawn()
        .unwrap();
    // A failed write means it exited early: its stderr, below, says why.
    let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "EOF on stdin exits 0, got {}: {stderr}",
        out.status
    );
    assert!(
        !out.stdout.contains(&b'\r'),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.ends_with(b"\n"));
    let ids: Vec<Value> = out
        .stdout
        .split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice::<Value>(line).unwrap()["id"].clone())
        .filter(|id| !id.is_null())
        .collect();
    assert_eq!(ids, [json!(1), json!(2)], "both answered, one frame a line");
}

#[test]
fn version_and_bad_config_keys() {
    // `hearth acp --version` too: the packages' checks run it from an npm project and a venv.
    for args in [&["--version"][..], &["acp", "--version"]] {
        let out = Command::new(cargo_bin("hearth"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(env!("CARGO_PKG_VERSION")),
            "{args:?}: {stdout}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(
        &path,
        r#"{"dataDir": ":memory:", "providers": {"openai": {"baseURL": "x"}}}"#,
    )
    .unwrap();
    let out = Command::new(cargo_bin("hearth"))
        .args(["acp", "--config"])
        .arg(&path)
        .stdin(Pipe::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("providers.openai") && stderr.contains("baseURL"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "errors never go to stdout");
}

/// Values the file's checks refuse are refused wherever they come from, at start, naming
/// what is wrong: text after the config's object (it was dropped), an empty `--data-dir` or
/// `--model` (the flags skipped the checks), `mcp.startupTimeoutSecs: 0` (every server then
/// failed), an `OPENAI_BASE_URL` without a scheme (a prompt failed as a transport error).
#[test]
fn bad_values_are_refused_at_start_wherever_they_come_from() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let good = file("good.json", r#"{"dataDir": ":memory:"}"#);
    // The arguments after `acp`, a variable set, and what the error must say.
    type Case<'a> = (Vec<std::ffi::OsString>, Option<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        (
            vec![
                "--config".into(),
                file("two.json", r#"{"dataDir": ":memory:"} {"model": "m"}"#).into(),
            ],
            None,
            "trailing characters",
        ),
        (
            vec![
                "--config".into(),
                good.clone().into(),
                "--data-dir".into(),
                "".into(),
            ],
            None,
            "`--data-dir` must not be empty",
        ),
        (
            vec![
                "--config".into(),
                good.clone().into(),
                "--model".into(),
                " ".into(),
            ],
            None,
            "`--model` must not be empty",
        ),
        (
            vec![
                "--config".into(),
                file(
                    "mcp.json",
                    r#"{"dataDir": ":memory:", "mcp": {"startupTimeoutSecs": 0}}"#,
                )
                .into(),
            ],
            None,
            "`mcp.startupTimeoutSecs`: must be at least 1",
        ),
        (
            vec!["--config".into(), good.clone().into()],
            Some(("OPENAI_BASE_URL", "127.0.0.1:9/v1")),
            "`OPENAI_BASE_URL` is `127.0.0.1:9/v1`, not an http(s) URL",
        ),
    ];
    for (args, env, expected) in cases {
        let mut command = Command::new(cargo_bin("hearth"));
        command
            .arg("acp")
            .args(&args)
            .stdin(Pipe::null())
            .current_dir(dir.path());
        if let Some((name, value)) = env {
            command.env(name, value);
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} started");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "errors never go to stdout");
    }
    assert!(
        !dir.path().join("hearth.db").exists(),
        "no store made where it was not asked for"
    );
}

#[test]
fn no_credential_means_auth_required() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"dataDir": dir.path()}).to_string();
    let env = [("OPENAI_API_KEY", None), ("OPENAI_BASE_URL", None)];
    let mut client = AcpClient::new(Stdio::start(&config, dir.path(), &env));
    let init = client.initialize();
    let method = init["authMethods"][0]["id"].clone();
    let error = client.call_err(
        "session/new",
        json!({"cwd": absolute("/tmp"), "mcpServers": []}),
    );
    assert_eq!(error["code"], -32000);
    assert!(
        error["data"]["detail"]
            .as_str()
            .unwrap()
            .contains("OPENAI_API_KEY"),
        "{error}"
    );
    let error = client.call_err("authenticate", json!({"methodId": method}));
    assert_eq!(error["code"], -32000);
}

#[test]
fn the_credential_can_come_from_the_environment() {
    let mock = mock(json!({"responses": [{"events": [{"text": "env ok"}]}]}));
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"dataDir": dir.path()}).to_string();
    let base = mock.base_url();
    let env = [
        ("OPENAI_API_KEY", Some("from-env")),
        ("OPENAI_BASE_URL", Some(base.as_str())),
        ("HEARTH_MODEL", Some("env-model")),
    ];
    let mut client = AcpClient::new(Stdio::start(&config, dir.path(), &env));
    let init = client.initialize();
    assert_eq!(
        client.call(
            "authenticate",
            json!({"methodId": init["authMethods"][0]["id"]})
        ),
        json!({})
    );
    let session = client.new_session(&absolute("/tmp"));
    client.prompt(&session, "hi");
    let request = &mock.requests()[0];
    assert_eq!(request.body["model"], "env-model");
    assert_eq!(request.headers["authorization"], "Bearer from-env");
}

#[test]
fn kill_9_mid_turn_keeps_everything_the_client_saw() {
    let events: Vec<Value> = (0..40)
        .flat_map(|i| [json!({"text": format!("<{i}>")}), json!({"stallMs": 25})])
        .collect();
    for stop_after in [1, 7, 19] {
        let mock = mock(json!({"responses": [{"events": events}]}));
        let dir = tempfile::tempdir().unwrap();
        let config = config(&mock, dir.path());
        let mut client = hearth(&config, dir.path());
        client.initialize();
        let session = client.new_session(&absolute("/tmp"));
        client.start_request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "count"}]}),
        );
        let mut seen = String::new();
        while seen.matches('<').count() < stop_after {
            let frame = client.next(Duration::from_secs(10)).expect("streaming");
            if let Some(text) = frame["params"]["update"]["content"]["text"].as_str()
                && frame["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            {
                seen.push_str(text);
            }
        }
        client.transport.child.kill().unwrap(); // SIGKILL
        client.transport.child.wait().unwrap();

        let db = rusqlite::Connection::open(dir.path().join("hearth.db")).unwrap();
        let check: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        let stored: String = db
            .prepare(
                "SELECT update_json FROM events WHERE kind = 'agent_message_chunk' ORDER BY id",
            )
            .unwrap()
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(|u| {
                serde_json::from_str::<Value>(&u.unwrap()).unwrap()["content"]["text"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert!(
            stored.starts_with(&seen),
            "stored {stored:?} lacks what the client saw {seen:?}"
        );

        let mut again = hearth(&config, dir.path());
        again.initialize();
        again.call(
            "session/load",
            json!({"sessionId": session, "cwd": absolute("/tmp"), "mcpServers": []}),
        );
        let replayed = agent_text(&again.updates(&session));
        assert!(
            replayed.starts_with(&seen),
            "replay {replayed:?} lacks {seen:?}"
        );
    }
}

/// Two `hearth acp` on one data dir: a load in the second leaves alone the call the first is
/// running (it stays pending, nothing is written for it); once the first is killed mid-call,
/// the second's next load of the same session closes the call, as a restart would.
#[test]
fn a_call_left_open_by_a_killed_process_is_closed_at_another_processes_next_load() {
    let write = json!({"path": "z.txt", "content": "z"}).to_string();
    let mock = mock(json!({"responses": [
        {"events": [{"toolCall": {"id": "c1", "name": "write", "arguments": write, "chunks": 1}}]},
    ]}));
    let (dir, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = config(&mock, dir.path());
    let cwd = work.path().to_string_lossy().into_owned();
    let mut running = hearth(&config, dir.path());
    running.initialize();
    let session = running.new_session(&cwd);
    running.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "write z"}]}),
    );
    running
        .wait_for(Duration::from_secs(20), |f| {
            f["method"] == "session/request_permission"
        })
        .expect("the write asks first");

    let mut other = hearth(&config, dir.path());
    other.initialize();
    let load = json!({"sessionId": session, "cwd": cwd, "mcpServers": []});
    let statuses = |client: &AcpClient<Stdio>, from: usize| -> Vec<String> {
        client.received[from..]
            .iter()
            .filter(|f| f["params"]["update"]["toolCallId"].is_string())
            .filter_map(|f| f["params"]["update"]["status"].as_str().map(str::to_string))
            .collect()
    };
    other.call("session/load", load.clone());
    assert_eq!(statuses(&other, 0), ["pending"], "left alone while it runs");

    running.transport.child.kill().unwrap(); // SIGKILL; TerminateProcess on Windows
    running.transport.child.wait().unwrap();
    // Windows may release a dead process's file locks a moment after it is gone.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let before = other.received.len();
        other.call("session/load", load.clone());
        let replayed = statuses(&other, before);
        if replayed == ["pending", "failed"] || Instant::now() > deadline {
            assert_eq!(
                replayed,
                ["pending", "failed"],
                "closed once its process is gone"
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `hearth acp` answers the first frame before it opens the store (the cold start's answer
/// waits for nothing it does not need), then opens it: a store that cannot be written ends the
/// process right after that answer, saying why, with nothing in it overwritten. File modes,
/// root and `setpriv` are Unix's (a read-only store on Windows is an ACL).
#[cfg(unix)]
#[test]
fn a_read_only_store_is_refused_right_after_the_first_answer() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"dataDir": dir.path()}).to_string();
    let config_path = dir.path().join("c.json");
    std::fs::write(&config_path, &config).unwrap();
    // Nothing is made of a process that is sent nothing.
    let status = Command::new(cargo_bin("hearth"))
        .args(["acp", "--config"])
        .arg(&config_path)
        .stdin(Pipe::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!dir.path().join("hearth.db").exists(), "no store opened");
    // Create the store, then make it and its directory read-only.
    let out = output_with_input_waiting(
        Command::new(cargo_bin("hearth"))
            .args(["acp", "--config"])
            .arg(&config_path),
        INITIALIZE,
    );
    assert!(out.status.success());
    let db = dir.path().join("hearth.db");
    let before = std::fs::read(&db).unwrap();
    chmod(dir.path(), 0o555);
    chmod(&db, 0o444);
    // root ignores file modes, so run hearth as `nobody` when we are root.
    let mut command = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(cargo_bin("hearth"));
        c
    } else {
        Command::new(cargo_bin("hearth"))
    };
    let out = output_with_input_waiting(
        command.args(["acp", "--config"]).arg(&config_path),
        INITIALIZE,
    );
    chmod(dir.path(), 0o755);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a read-only store must be refused: {stderr}"
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["result"]["protocolVersion"], 1, "answered first");
    assert!(
        stderr.contains("hearth.db") && stderr.contains("readonly"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "nothing overwritten");
}

/// `hearth acp` on a `:memory:` store, its stdin and stdout piped to the test.
#[cfg(unix)]
fn spawn_in_memory() -> std::process::Child {
    Command::new(cargo_bin("hearth"))
        .args(["acp", "--data-dir", ":memory:"])
        .stdin(Pipe::piped())
        .stdout(Pipe::piped())
        .stderr(Pipe::null())
        .spawn()
        .unwrap()
}

/// Runs `command` with `input` in its stdin's pipe before it starts, then EOF: its first
/// frame is waiting when it looks (`hearth acp` answers such a frame before it starts).
#[cfg(unix)]
fn output_with_input_waiting(command: &mut Command, input: &str) -> std::process::Output {
    use std::io::Write;
    let (reader, mut writer) = std::io::pipe().unwrap();
    writer.write_all(input.as_bytes()).unwrap();
    drop(writer);
    command
        .stdin(reader)
        .stderr(Pipe::piped())
        .output()
        .unwrap()
}

#[cfg(unix)]
const INITIALIZE: &str =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";

#[cfg(unix)]
fn chmod(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(unix)]
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

// SIGTERM, `sleep`, `pgrep` and /proc are Unix's; on Windows the engine ends with its
// stdin (the EOF test above), and its children with their Job Objects.
#[cfg(unix)]
#[test]
fn sigterm_closes_the_engine_and_kills_running_commands() {
    let marker = format!("sleep 41{}", std::process::id() % 1000);
    let arguments = json!({"command": format!("{marker} & {marker}")}).to_string();
    let mock = mock(
        json!({"responses": [{"events": [{"toolCall": {"id": "c", "name": "run_command", "arguments": arguments}}]}]}),
    );
    let dir = tempfile::tempdir().unwrap();
    let mut config: Value = serde_json::from_str(&config(&mock, dir.path())).unwrap();
    config["permissionMode"] = json!("bypass");
    let mut client = hearth(&config.to_string(), dir.path());
    client.initialize();
    // A project beside the data dir: the sandbox refuses a workspace holding Hearth's state.
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let session = client.new_session(project.to_str().unwrap());
    client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "sleep"}]}),
    );
    client
        .wait_for(Duration::from_secs(10), |f| {
            f["params"]["update"]["status"] == "in_progress"
        })
        .expect("running");
    let running = || {
        !Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap()
            .stdout
            .is_empty()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !running() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(running(), "the command started");
    terminate(&mut client);
    assert!(!running(), "no command outlives the agent");
}

/// An MCP server (and the child it started) dies with `hearth acp` on SIGTERM.
#[cfg(unix)]
#[test]
fn sigterm_leaves_no_mcp_server_behind() {
    let mock = mock(json!({"responses": [{"events": [{"text": "hi"}]}]}));
    let dir = tempfile::tempdir().unwrap();
    let python = std::env::var("MCP_TEST_PYTHON").unwrap_or_else(|_| {
        let venv = hearth_testkit::repo_root().join("tests/mcp/.venv/bin/python");
        assert!(venv.exists(), "run `bash tests/mcp/setup.sh` first");
        venv.to_string_lossy().into_owned()
    });
    let pidfile = dir.path().join("pids");
    let server = json!({
        "name": "files",
        "command": python,
        "args": [hearth_testkit::repo_root().join("tests/mcp/server.py"), "--name", "files"],
        "env": [{"name": "MCP_TEST_PIDFILE", "value": pidfile}, {"name": "MCP_TEST_GRANDCHILD", "value": "1"}],
    });
    let mut client = hearth(&config(&mock, dir.path()), dir.path());
    client.initialize();
    let created = client.call(
        "session/new",
        json!({"cwd": dir.path(), "mcpServers": [server]}),
    );
    let session = created["sessionId"].as_str().unwrap().to_string();
    // The turn waits for the servers to be up.
    client.prompt(&session, "hello");
    let pids: Vec<String> = std::fs::read_to_string(&pidfile)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect();
    assert_eq!(pids.len(), 2, "the server and its child: {pids:?}");
    terminate(&mut client);
    let alive = |pid: &String| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.split(") ").nth(1).unwrap_or("").starts_with('Z'))
    };
    // The agent kills the servers' group as it exits; a killed process is gone once the
    // kernel has run it to its end, which on a loaded machine can trail the agent's exit.
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(alive) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !pids.iter().any(alive),
        "no MCP process outlives the agent: {pids:?}"
    );
}

/// Sends `hearth acp` SIGTERM and waits for its clean exit.
#[cfg(unix)]
fn terminate(client: &mut AcpClient<Stdio>) {
    signal(client, "TERM");
}

/// Ctrl-C and a closed terminal stop `hearth acp` as cleanly as SIGTERM does. (Unix signals,
/// sent with `kill`; a Windows engine ends with its stdin.)
#[cfg(unix)]
#[test]
fn sigint_and_sighup_exit_cleanly() {
    let mock = mock(json!({"responses": []}));
    let dir = tempfile::tempdir().unwrap();
    for name in ["INT", "HUP"] {
        let mut client = hearth(&config(&mock, dir.path()), dir.path());
        client.initialize();
        signal(&mut client, name);
    }
}

/// Sends `hearth acp` the signal SIG`name` and waits for its clean exit.
#[cfg(unix)]
fn signal(client: &mut AcpClient<Stdio>, name: &str) {
    let pid = client.transport.child.id().to_string();
    assert!(
        Command::new("kill")
            .args([&format!("-{name}"), &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = client.transport.child.wait().unwrap();
    assert!(status.success(), "a clean exit on SIG{name}, got {status}");
}

/// A client that writes a great deal before it reads anything must not deadlock with
/// `hearth acp`: only the first answer is written on the reading thread (before the engine
/// starts its delivery thread), so that thread never stops reading to wait for the client.
/// 3,000 `initialize`s (300 KB in, 4 MB of answers out) are written in one go, far more than
/// either pipe holds.
#[cfg(unix)]
#[test]
fn a_client_that_writes_everything_before_reading_is_still_answered() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = spawn_in_memory();
    let count = 3000;
    let frames: String = (1..=count)
        .map(|id| {
            let request = json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
                "params": {"protocolVersion": 1}});
            format!("{request}\n")
        })
        .collect();
    let mut stdin = child.stdin.take().unwrap();
    let (written, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = written.send(stdin.write_all(frames.as_bytes()));
    });
    let outcome = done.recv_timeout(Duration::from_secs(60));
    if outcome.is_err() {
        let _ = child.kill();
    }
    outcome.expect("hearth kept reading").unwrap();
    let answers = BufReader::new(child.stdout.take().unwrap()).lines();
    let ids: Vec<u64> = answers
        .take(count)
        .map(|line| {
            serde_json::from_str::<Value>(&line.unwrap()).unwrap()["id"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(
        ids,
        (1..=count as u64).collect::<Vec<_>>(),
        "each answered, in order"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// A termination signal that comes before `hearth acp` has its listeners (it installs them
/// after answering a first frame that was already waiting) is held back, not the default's
/// death: the agent answers, then exits 0 as for any later signal. Half the first frame is in
/// the pipe before the spawn, so the agent waits, signals held, for the rest; the signal is
/// sent once /proc shows them held.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_before_the_listeners_still_ends_the_agent_cleanly() {
    use std::io::{BufRead, BufReader, Write};
    let (reader, mut writer) = std::io::pipe().unwrap();
    let (head, tail) = INITIALIZE.split_at(INITIALIZE.len() / 2);
    writer.write_all(head.as_bytes()).unwrap();
    let mut child = Command::new(cargo_bin("hearth"))
        .args(["acp", "--data-dir", ":memory:"])
        .stdin(reader)
        .stdout(Pipe::piped())
        .stderr(Pipe::null())
        .spawn()
        .unwrap();
    // SIGHUP, SIGINT and SIGTERM: bits 0, 1 and 14 of the blocked mask.
    let held = 1 << 0 | 1 << 1 | 1 << 14;
    let status = format!("/proc/{}/status", child.id());
    wait_for(
        || blocked_signals(&status) & held == held,
        "the signals held back",
    );
    terminate_pid(child.id());
    writer.write_all(tail.as_bytes()).unwrap();
    let mut answer = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut answer).unwrap();
    assert!(answer.contains(r#""id":1,"result""#), "{answer}");
    let status = child.wait().unwrap();
    assert!(status.success(), "a clean exit, got {status}");
}

/// An agent spawned and sent nothing does not hold the signals back while it waits for its
/// first frame: it starts at once, and a SIGTERM then ends it cleanly.
#[cfg(target_os = "linux")]
#[test]
fn an_agent_waiting_for_its_first_frame_ends_on_a_signal() {
    let mut child = spawn_in_memory();
    let tasks = format!("/proc/{}/task", child.id());
    let listening = || {
        std::fs::read_dir(&tasks)
            .into_iter()
            .flatten()
            .flatten()
            .any(|task| {
                std::fs::read_to_string(task.path().join("comm"))
                    .is_ok_and(|name| name.trim() == "hearth-signals")
            })
    };
    wait_for(listening, "the signal listeners");
    terminate_pid(child.id());
    let status = child.wait().unwrap();
    assert!(status.success(), "a clean exit, got {status}");
}

#[cfg(target_os = "linux")]
fn wait_for(condition: impl Fn() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "never saw {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(target_os = "linux")]
fn terminate_pid(pid: u32) {
    let pid = pid.to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(sent.success());
}

/// The `SigBlk` mask of a process's main thread, from its /proc status.
#[cfg(target_os = "linux")]
fn blocked_signals(status: &str) -> u64 {
    std::fs::read_to_string(status)
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("SigBlk:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or(0)
}
