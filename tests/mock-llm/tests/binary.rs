//! The `hearth-mock-llm` binary, driven the way a Node or Python test would drive it.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_hearth-mock-llm"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// What a child's pipe carries until it closes.
fn read_all(mut pipe: impl Read) -> String {
    let mut text = String::new();
    pipe.read_to_string(&mut text).unwrap();
    text
}

fn wait_for_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("hearth-mock-llm did not exit");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn prints_its_url_serves_the_script_and_exits_when_stdin_closes() {
    let dir = std::env::temp_dir().join(format!("mock-llm-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    let responses = json!({"responses": [{"events": [{"text": "from a file"}]}]});
    std::fs::write(&script, responses.to_string()).unwrap();

    let mut child = spawn(&["--script", script.to_str().unwrap()]);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    stdout.read_line(&mut url).unwrap();
    let url = url.strip_suffix('\n').expect("one whole line");
    let port = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/v1"))
        .unwrap_or_else(|| panic!("unexpected URL {url:?}"));
    port.parse::<u16>().unwrap();

    let reply = common::http()
        .post(format!("{url}/chat/completions"))
        .json(&json!({"model": "m"}))
        .send()
        .await
        .unwrap();
    let body: Value = reply.json().await.unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "from a file");

    drop(child.stdin.take());
    assert!(wait_for_exit(&mut child).success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "the URL is the only line on stdout");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn listens_on_the_requested_port() {
    // A free port is found by binding port 0 and letting it go; a test running beside this one
    // may take it before the child binds it, so a child that finds it in use is tried again on
    // another.
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = spawn(&["--port", &port.to_string()]);
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        if url.is_empty() {
            let stderr = read_all(child.stderr.take().unwrap());
            assert!(stderr.contains("in use"), "no URL, and: {stderr}");
            assert!(!wait_for_exit(&mut child).success());
            continue;
        }
        assert_eq!(url, format!("http://127.0.0.1:{port}/v1\n"));
        drop(child.stdin.take());
        assert!(wait_for_exit(&mut child).success());
        return;
    }
    panic!("every port tried was taken before the mock could bind it");
}

#[test]
fn a_bad_script_fails_with_a_message_naming_the_file() {
    let mut child = spawn(&["--script", "/nonexistent/script.json"]);
    assert!(!wait_for_exit(&mut child).success());
    let stderr = read_all(child.stderr.take().unwrap());
    assert!(stderr.contains("/nonexistent/script.json"), "{stderr}");
    let stdout = read_all(child.stdout.take().unwrap());
    assert_eq!(stdout, "");
}
