//! `hearth run -p`: the headless mode, as a script or CI job would use it.

use std::process::{Command, Output, Stdio};

use hearth_mock_llm::{MockLlm, Script};
use hearth_testkit::cargo_bin;
use serde_json::{Value, json};

fn mock(responses: Value) -> MockLlm {
    MockLlm::start(serde_json::from_value::<Script>(json!({ "responses": responses })).unwrap())
        .unwrap()
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"events": [{"toolCall": {"id": id, "name": name, "arguments": arguments.to_string()}}]})
}

fn text(t: &str) -> Value {
    json!({"events": [{"text": t}]})
}

/// Runs `hearth run` with a config pointing at `mock`; stdin is not a terminal.
fn run(mock: &MockLlm, dir: &std::path::Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let config = json!({"dataDir": dir.join("data"), "model": "mock-model",
        "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "sk-test-SECRET-4242", "maxRetries": 0}}});
    let config_path = dir.join("config.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut command = Command::new(cargo_bin("hearth"));
    command
        .arg("run")
        .arg("--config")
        .arg(&config_path)
        .arg("--cwd")
        .arg(dir)
        .args(extra)
        .stdin(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn text_output_prints_the_answer_and_the_tool_activity() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
    let mock = mock(json!([
        call("r", "read", json!({"path": "a.txt"})),
        text("It reads alpha.")
    ]));
    let out = run(&mock, dir.path(), &["-p", "what is in a.txt?"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "It reads alpha.");
    assert!(
        stderr(&out).contains("Read"),
        "tool activity on stderr: {}",
        stderr(&out)
    );
}

#[test]
fn jsonl_output_is_one_update_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(json!([text("hi")]));
    let out = run(
        &mock,
        dir.path(),
        &["-p", "hello", "--output", "jsonl"],
        &[],
    );
    assert!(out.status.success());
    let updates: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "agent_message_chunk" && u["content"]["text"] == "hi")
    );
    assert!(updates.iter().all(|u| u["sessionUpdate"].is_string()));
}

#[test]
fn without_a_terminal_permission_requests_are_rejected_and_mode_decides() {
    let dir = tempfile::tempdir().unwrap();
    let mock1 = mock(json!([
        call("w", "write", json!({"path": "out.txt", "content": "x"})),
        text("ok")
    ]));
    let out = run(&mock1, dir.path(), &["-p", "write it"], &[]);
    assert!(out.status.success());
    assert!(!dir.path().join("out.txt").exists());
    assert!(stderr(&out).contains("rejected"), "{}", stderr(&out));

    let mock2 = mock(json!([
        call("w", "write", json!({"path": "out.txt", "content": "x"})),
        text("ok")
    ]));
    let out = run(
        &mock2,
        dir.path(),
        &["-p", "write it", "--mode", "accept_edits"],
        &[],
    );
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "x"
    );
}

#[test]
fn without_a_terminal_a_question_tells_the_model_it_could_not_ask() {
    let dir = tempfile::tempdir().unwrap();
    let ask = json!({"question": "Which colour?", "options": [{"label": "red"}]});
    let mock = mock(json!([
        call("q", "ask_user", ask),
        text("I'll pick myself.")
    ]));
    let out = run(&mock, dir.path(), &["-p", "paint it"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("could not ask: Which colour?"),
        "{}",
        stderr(&out)
    );
    let messages = mock.requests()[1].body["messages"].clone();
    let result = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .clone();
    assert_eq!(
        result,
        "Could not ask the user: the client could not show the form: there is no terminal to \
         ask the user on. Do not assume an answer: put the question in your reply instead."
    );
}

/// Leaving the sandbox needs someone to approve it: headless, even `bypass` refuses, and the
/// command does not run.
#[test]
fn without_a_terminal_an_escalation_is_refused_even_in_bypass() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let escalate = json!({"command": format!("touch {}", target.display()),
        "sandbox": "escalate", "justification": "it must write there"});
    let mock = mock(json!([call("e", "run_command", escalate), text("ok")]));
    let out = run(
        &mock,
        dir.path(),
        &["-p", "escape", "--mode", "bypass"],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!target.exists());
    assert!(
        stderr(&out).contains("rejected `Run outside the sandbox: `touch"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn errors_exit_non_zero_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(json!([{"status": 500, "error": "model on fire"}]));
    let out = run(&mock, dir.path(), &["-p", "hi"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("model on fire"), "{}", stderr(&out));
    let out = Command::new(cargo_bin("hearth"))
        .args(["run", "-p", "x", "--mode", "yolo"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn the_credential_never_reaches_the_database_or_the_logs() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(json!([
        call(
            "c",
            "run_command",
            json!({"command": "echo $OPENAI_API_KEY"})
        ),
        text("done")
    ]));
    let out = run(
        &mock,
        dir.path(),
        &["-p", "hi", "--mode", "bypass"],
        &[("RUST_LOG", "trace")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).len() > 1000, "trace logging was on");
    assert_eq!(
        mock.requests()[0].headers["authorization"],
        "Bearer sk-test-SECRET-4242",
        "it was used"
    );
    assert!(
        !stderr(&out).contains("SECRET-4242"),
        "the key leaked into the logs"
    );
    // Every file under the data dir: the store, and the engines' lock files (`engines/`).
    let mut dirs = vec![dir.path().join("data")];
    while let Some(next) = dirs.pop() {
        for entry in std::fs::read_dir(next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains("SECRET-4242"),
                "the key reached {}",
                path.display()
            );
        }
    }
}

// `script` (util-linux) gives hearth its pseudo-terminal: Unix's. Windows has no `script`,
// and a console for a child is another API.
#[cfg(unix)]
#[test]
fn on_a_terminal_the_user_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(json!([
        call(
            "w",
            "write",
            json!({"path": "t.txt", "content": "approved"})
        ),
        text("written")
    ]));
    let config = json!({"dataDir": ":memory:", "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "k", "maxRetries": 0}}});
    let config_path = dir.path().join("config.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    // `script` gives hearth a pseudo-terminal; the answer `y` arrives on it.
    let line = format!(
        "{} run -p 'write it' --config {} --cwd {}",
        cargo_bin("hearth").display(),
        config_path.display(),
        dir.path().display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("`script` (util-linux) runs");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"y\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(screen.contains("Allow Create t.txt?"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("t.txt")).unwrap(),
        "approved"
    );
}

/// `--mcp-config` takes the keyed file shape other agents use; the server's tool is called.
#[test]
fn mcp_config_servers_are_connected_for_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let venv = hearth_testkit::repo_root().join("tests/mcp/.venv/bin/python");
    assert!(venv.exists(), "run `bash tests/mcp/setup.sh` first");
    let server = hearth_testkit::repo_root().join("tests/mcp/server.py");
    let file = dir.path().join("mcp.json");
    let servers =
        json!({"mcpServers": {"files": {"command": venv, "args": [server, "--name", "files"]}}});
    std::fs::write(&file, servers.to_string()).unwrap();
    let mock = mock(json!([
        call("e", "mcp__files__echo", json!({"text": "from the server"})),
        text("Echoed.")
    ]));
    let mcp_config = file.to_string_lossy().into_owned();
    let out = run(
        &mock,
        dir.path(),
        &["-p", "echo", "--mcp-config", &mcp_config],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Echoed."), "{}", stdout(&out));
    let requests = mock.requests();
    let result = requests[1].body["messages"].to_string();
    assert!(result.contains("from the server"), "{result}");
}
