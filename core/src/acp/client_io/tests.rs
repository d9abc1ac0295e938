//! `ClientIo` against a fake client that records every request and serves scripted answers.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::mpsc::unbounded_channel;

use super::*;

fn failed(message: &str) -> ClientError {
    ClientError {
        message: message.into(),
    }
}

/// The client-served workspace of session `sess-1`, over `client`.
fn client_io(client: &Arc<FakeClient>, abilities: ClientAbilities) -> ClientIo {
    let session = SessionClient::new(
        client.clone(),
        Arc::from("sess-1"),
        CancellationToken::new(),
    );
    ClientIo::new(Arc::new(session), abilities, crate::io::testing::local())
}

#[derive(Default)]
struct FakeClient {
    calls: Mutex<Vec<(String, Value)>>,
    files: Mutex<HashMap<String, String>>,
    /// What successive `terminal/output` polls return: (output, truncated); the last repeats.
    snapshots: Vec<(&'static str, bool)>,
    served: AtomicUsize,
    /// Whether the command exits once every snapshot was served (else it runs until killed).
    exits: bool,
    fail_wait: bool,
    killed: AtomicBool,
}

impl FakeClient {
    fn methods(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|(m, _)| m.clone())
            .collect()
    }

    fn params(&self, method: &str) -> Value {
        let calls = self.calls.lock().unwrap();
        calls.iter().find(|(m, _)| m == method).unwrap().1.clone()
    }

    fn exited(&self) -> bool {
        self.exits && self.served.load(Ordering::SeqCst) >= self.snapshots.len()
    }

    fn exit_status(&self) -> Option<Value> {
        if self.killed.load(Ordering::SeqCst) {
            Some(json!({ "exitCode": null, "signal": "SIGKILL" }))
        } else if self.exited() {
            Some(json!({ "exitCode": 0, "signal": null }))
        } else {
            None
        }
    }

    async fn answer(&self, method: &str, params: &Value) -> Result<Value, ClientError> {
        match method {
            "fs/read_text_file" => {
                let files = self.files.lock().unwrap();
                match files.get(params["path"].as_str().unwrap()) {
                    Some(content) => Ok(json!({ "content": content })),
                    None => Err(failed("Resource not found")),
                }
            }
            "fs/write_text_file" => {
                let path = params["path"].as_str().unwrap().to_owned();
                let content = params["content"].as_str().unwrap().to_owned();
                self.files.lock().unwrap().insert(path, content);
                Ok(json!({}))
            }
            "terminal/create" => Ok(json!({ "terminalId": "term-1" })),
            "terminal/output" => {
                let served = self.served.fetch_add(1, Ordering::SeqCst);
                let (output, truncated) = self.snapshots[served.min(self.snapshots.len() - 1)];
                Ok(
                    json!({ "output": output, "truncated": truncated, "exitStatus": self.exit_status() }),
                )
            }
            "terminal/wait_for_exit" => loop {
                if self.fail_wait {
                    return Err(failed("terminal vanished"));
                }
                if let Some(status) = self.exit_status() {
                    return Ok(status);
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            },
            "terminal/kill" => {
                self.killed.store(true, Ordering::SeqCst);
                Ok(json!({}))
            }
            "terminal/release" => Ok(json!({})),
            other => Err(failed(&format!("Method not found: {other}"))),
        }
    }
}

impl ClientPort for FakeClient {
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ClientError>> {
        self.calls
            .lock()
            .unwrap()
            .push((method.to_owned(), params.clone()));
        Box::pin(async move {
            tokio::select! {
                _ = cancel.cancelled() => Err(failed("Request cancelled")),
                answer = self.answer(method, &params) => answer,
            }
        })
    }
}

const ALL: ClientAbilities = ClientAbilities {
    read_text_file: true,
    write_text_file: true,
    terminal: true,
};

fn spec(command: &str) -> CommandSpec {
    CommandSpec {
        command: command.to_owned(),
        cwd: PathBuf::from("/work/project"),
        timeout: Duration::from_secs(60),
        output_limit: 1000,
        sandbox: None,
    }
}

#[tokio::test]
async fn reads_and_writes_through_the_client_when_advertised() {
    let client = Arc::new(FakeClient::default());
    client
        .files
        .lock()
        .unwrap()
        .insert("/p/a.rs".into(), "unsaved buffer".into());
    let io = client_io(&client, ALL);

    assert_eq!(
        io.read_text(Path::new("/p/a.rs")).await.unwrap(),
        "unsaved buffer"
    );
    io.write_text(Path::new("/p/b.rs"), "new").await.unwrap();
    let missing = io.read_text(Path::new("/p/none")).await.unwrap_err();

    assert_eq!(client.files.lock().unwrap()["/p/b.rs"], "new");
    assert!(
        missing
            .0
            .contains("could not read /p/none: Resource not found"),
        "{missing}"
    );
    assert_eq!(
        client.params("fs/read_text_file"),
        json!({ "sessionId": "sess-1", "path": "/p/a.rs" })
    );
    assert_eq!(
        client.params("fs/write_text_file"),
        json!({ "sessionId": "sess-1", "path": "/p/b.rs", "content": "new" })
    );
}

#[tokio::test]
async fn works_locally_for_whatever_the_client_did_not_advertise() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "on disk").unwrap();
    let client = Arc::new(FakeClient::default());
    let io = client_io(
        &client,
        ClientAbilities {
            read_text_file: true,
            ..ClientAbilities::default()
        },
    );

    io.write_text(&dir.path().join("b.txt"), "local write")
        .await
        .unwrap();
    let (tx, _rx) = unbounded_channel();
    let mut local = spec("echo local");
    local.cwd = dir.path().to_owned();
    let result = io
        .run_command(local, tx, CancellationToken::new())
        .await
        .unwrap();

    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "local write"
    );
    assert_eq!(result.output, "local\n");
    assert_eq!(result.terminal_id, None);
    assert!(client.methods().is_empty(), "{:?}", client.methods());

    let none = client_io(&client, ClientAbilities::default());
    assert_eq!(none.read_text(&file).await.unwrap(), "on disk");
    assert!(client.methods().is_empty(), "{:?}", client.methods());
}

#[tokio::test]
async fn a_terminal_forwards_only_new_output_and_is_released() {
    let client = Arc::new(FakeClient {
        snapshots: vec![
            ("a\n", false),
            ("a\nb\n", false),
            ("a\nb\nc\n", false),
            ("b\nc\nd\n", true),
            ("c\nd\ne\n", true),
        ],
        exits: true,
        ..FakeClient::default()
    });
    let io = client_io(&client, ALL);
    let (tx, mut rx) = unbounded_channel();

    let result = io
        .run_command(spec("make"), tx, CancellationToken::new())
        .await
        .unwrap();

    let mut deltas = Vec::new();
    while let Ok(delta) = rx.try_recv() {
        deltas.push(delta);
    }
    assert_eq!(deltas.concat(), "a\nb\nc\nd\ne\n", "{deltas:?}");
    assert_eq!(result.terminal_id.as_deref(), Some("term-1"));
    assert_eq!(result.exit_code, Some(0));
    assert!(result.truncated && !result.timed_out);
    assert!(result.output.ends_with("c\nd\ne\n"), "{}", result.output);
    assert!(result.output.contains("earlier output dropped"));
    assert_eq!(
        client.params("terminal/create"),
        json!({
            "sessionId": "sess-1",
            "command": "sh",
            "args": ["-c", "make"],
            "cwd": "/work/project",
            "outputByteLimit": 1000,
        })
    );
    let methods = client.methods();
    assert_eq!(methods.last().unwrap(), "terminal/release");
    assert!(!methods.contains(&"terminal/kill".to_owned()));
    assert_eq!(client.params("terminal/release")["terminalId"], "term-1");
}

#[tokio::test]
async fn a_terminal_that_times_out_is_killed_read_and_released() {
    let client = Arc::new(FakeClient {
        snapshots: vec![("still going\n", false)],
        ..FakeClient::default()
    });
    let io = client_io(&client, ALL);
    let mut slow = spec("sleep 1000");
    slow.timeout = Duration::from_millis(400);
    let (tx, _rx) = unbounded_channel();

    let result = io
        .run_command(slow, tx, CancellationToken::new())
        .await
        .unwrap();

    assert!(result.timed_out);
    assert_eq!(result.signal.as_deref(), Some("SIGKILL"));
    assert_eq!(result.output, "still going\n");
    let methods = client.methods();
    let tail = &methods[methods.len() - 3..];
    assert_eq!(
        tail,
        ["terminal/kill", "terminal/output", "terminal/release"]
    );
}

#[tokio::test]
async fn a_cancelled_terminal_is_killed_and_released() {
    let client = Arc::new(FakeClient {
        snapshots: vec![("working\n", false)],
        ..FakeClient::default()
    });
    let io = client_io(&client, ALL);
    let cancel = CancellationToken::new();
    let (tx, mut rx) = unbounded_channel();

    let running = io.run_command(spec("sleep 1000"), tx, cancel.clone());
    let canceller = async {
        assert_eq!(rx.recv().await.unwrap(), "working\n");
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(running, canceller);

    let result = result.unwrap();
    assert!(!result.timed_out);
    assert_eq!(result.signal.as_deref(), Some("SIGKILL"));
    let methods = client.methods();
    assert!(methods.contains(&"terminal/kill".to_owned()));
    assert_eq!(methods.last().unwrap(), "terminal/release");
}

#[tokio::test]
async fn a_terminal_is_released_when_waiting_fails() {
    let client = Arc::new(FakeClient {
        snapshots: vec![("", false)],
        fail_wait: true,
        ..FakeClient::default()
    });
    let io = client_io(&client, ALL);
    let (tx, _rx) = unbounded_channel();

    let error = io
        .run_command(spec("true"), tx, CancellationToken::new())
        .await
        .unwrap_err();

    assert!(error.0.contains("terminal vanished"), "{error}");
    assert_eq!(client.methods().last().unwrap(), "terminal/release");
}

#[tokio::test]
async fn a_terminal_is_released_when_the_future_is_dropped() {
    let client = Arc::new(FakeClient {
        snapshots: vec![("", false)],
        ..FakeClient::default()
    });
    let io = Arc::new(client_io(&client, ALL));
    let (tx, _rx) = unbounded_channel();

    let running = tokio::spawn({
        let io = io.clone();
        async move {
            io.run_command(spec("sleep 1000"), tx, CancellationToken::new())
                .await
        }
    });
    while !client
        .methods()
        .contains(&"terminal/wait_for_exit".to_owned())
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    running.abort();
    let _ = running.await;

    for _ in 0..100 {
        if client.methods().contains(&"terminal/release".to_owned()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("never released: {:?}", client.methods());
}
