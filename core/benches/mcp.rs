//! MCP startup through the engine: from `session/new` naming one server to the first model
//! request that offers the server's tools (the prompt is sent right after `session/new`; the
//! turn waits for the server), for `tests/mcp/server.py` (the official Python SDK) and for
//! `@modelcontextprotocol/server-everything`, median of 20 sessions each.
//!
//! Run: `bash tests/mcp/setup.sh && cargo bench -p hearth-core --bench mcp` (`-- --quick`:
//! 3 sessions each). Numbers, not assertions: the machines are shared and noisy.

use std::time::{Duration, Instant};

use hearth_mock_llm::{MockLlm, Script};
use hearth_testkit::{AcpClient, InProcess, repo_root};
use serde_json::{Value, json};

fn servers() -> Vec<(&'static str, Value)> {
    let mcp = repo_root().join("tests/mcp");
    let python = mcp.join(".venv/bin/python");
    let everything = mcp.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        python.exists() && everything.exists(),
        "run `bash tests/mcp/setup.sh` first"
    );
    vec![
        (
            "server.py (Python mcp 2.3.0, stdio)",
            json!({"name": "files", "command": python, "args": [mcp.join("server.py"), "--name", "files"], "env": []}),
        ),
        (
            "server-everything (stdio)",
            json!({"name": "everything", "command": "node", "args": [everything, "stdio"], "env": []}),
        ),
    ]
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// `session/new` → the model's first request, which carries the server's tools.
fn startup(
    client: &mut AcpClient<InProcess>,
    mock: &MockLlm,
    cwd: &str,
    server: &Value,
) -> Duration {
    let seen = mock.requests().len();
    let started = Instant::now();
    let created = client.call("session/new", json!({"cwd": cwd, "mcpServers": [server]}));
    let session = created["sessionId"].as_str().unwrap().to_string();
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
    );
    while mock.requests().len() == seen {
        std::thread::sleep(Duration::from_micros(200));
    }
    let took = started.elapsed();
    let tools = mock.requests()[seen].body["tools"].to_string();
    assert!(tools.contains("mcp__"), "the server's tools were offered");
    client.response(&prompt);
    client.call("session/close", json!({"sessionId": session}));
    took
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 3 } else { 20 };
    let responses: Vec<Value> = (0..2 * runs)
        .map(|_| json!({"events": [{"text": "ok"}]}))
        .collect();
    let mock = MockLlm::start(
        serde_json::from_value::<Script>(json!({ "responses": responses })).unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "dataDir": dir.path(),
        "model": "mock-model",
        "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "bench", "maxRetries": 0}},
    });
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.initialize();
    let cwd = dir.path().to_string_lossy().into_owned();
    println!(
        "| MCP server | `session/new` → tools offered to the model (median of {runs}) | min | max |"
    );
    println!("|---|---|---|---|");
    for (label, server) in servers() {
        let times: Vec<Duration> = (0..runs)
            .map(|_| startup(&mut client, &mock, &cwd, &server))
            .collect();
        let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
        let (min, max) = (times.iter().min().unwrap(), times.iter().max().unwrap());
        println!(
            "| {label} | {:.0} ms | {:.0} ms | {:.0} ms |",
            ms(&median(times.clone())),
            ms(min),
            ms(max)
        );
    }
}
