//! Turn figures, in-process, against the scripted mock LLM:
//! - engine overhead per streamed model token (the mock streaming as fast as it can), as
//!   (prompt → answer) minus the time to read the same stream straight off the socket;
//! - cancel latency: `session/cancel` → `stopReason: cancelled` while `run_command` runs a
//!   live `sleep` process tree.
//!
//! Run: `cargo bench -p hearth-core --bench turn` (`-- --quick` for a smoke run;
//! `BENCH_DATA=:memory:` to take SQLite out of the figure).
//! Numbers, not assertions: the machines are shared and noisy.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_core::{Config, Engine, Host};
use hearth_mock_llm::{MockLlm, Response, Script};
use serde_json::{Value, json};

struct Channel(Mutex<Sender<String>>);

impl Host for Channel {
    fn deliver(&self, frame: &str) {
        let _ = self.0.lock().unwrap().send(frame.to_string());
    }
}

struct Client {
    engine: Engine,
    frames: Receiver<String>,
    next: u64,
}

impl Client {
    fn start(mock: &MockLlm, dir: &std::path::Path) -> Client {
        let config = json!({"dataDir": std::env::var("BENCH_DATA").map(Value::from).unwrap_or(json!(dir)), "model": "bench", "permissionMode": "bypass",
            "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "bench", "maxRetries": 0}}});
        let (tx, frames) = mpsc::channel();
        let engine = Engine::start(
            Config::from_json(&config.to_string()).unwrap(),
            Arc::new(Channel(Mutex::new(tx))),
        )
        .unwrap();
        let mut client = Client {
            engine,
            frames,
            next: 1,
        };
        client.call("initialize", json!({"protocolVersion": 1}));
        client
    }

    fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        self.engine
            .send(
                &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                    .to_string(),
            )
            .unwrap();
        id
    }

    /// Waits for the frame `pred` accepts, counting the frames before it.
    fn until(&self, pred: impl Fn(&str) -> bool) -> usize {
        let mut seen = 0;
        loop {
            let frame = self
                .frames
                .recv_timeout(Duration::from_secs(60))
                .expect("a frame");
            seen += 1;
            if pred(&frame) {
                return seen;
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        let wanted = format!(r#""id":{id},"#);
        loop {
            let frame = self
                .frames
                .recv_timeout(Duration::from_secs(60))
                .expect("a frame");
            if frame.contains(&wanted) && !frame.contains(r#""method""#) {
                return serde_json::from_str(&frame).unwrap();
            }
        }
    }
}

fn script(responses: Vec<Response>) -> Script {
    Script { responses }
}

fn repeat(count: u64) -> Response {
    serde_json::from_value(json!({"events": [{"repeat": {"text": "tok ", "count": count}}]}))
        .unwrap()
}

/// Reads one scripted stream straight off the socket: the cost of the server and the wire.
fn raw_stream(mock: &MockLlm) -> Duration {
    let address = mock
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
    let body = json!({"model": "bench", "stream": true, "messages": []}).to_string();
    let started = Instant::now();
    let mut socket = TcpStream::connect(&address).unwrap();
    write!(socket, "POST /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut sink = Vec::new();
    socket.read_to_end(&mut sink).unwrap();
    started.elapsed()
}

fn token_overhead(tokens: u64, runs: usize) -> (f64, f64, f64) {
    let mut responses = Vec::new();
    for _ in 0..runs {
        responses.push(repeat(tokens));
        responses.push(repeat(tokens));
    }
    let mock = MockLlm::start(script(responses)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(&mock, dir.path());
    let (mut per_token, mut turn_ms, mut raw_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let raw = raw_stream(&mock);
        let session = client.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))["result"]["sessionId"].clone();
        let started = Instant::now();
        let answer = client.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        );
        let turn = started.elapsed();
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        per_token.push((turn.as_secs_f64() - raw.as_secs_f64()) * 1e6 / tokens as f64);
        turn_ms.push(turn.as_secs_f64() * 1e3);
        raw_ms.push(raw.as_secs_f64() * 1e3);
    }
    client.engine.close().unwrap();
    (median(per_token), median(turn_ms), median(raw_ms))
}

fn cancel_latency(runs: usize) -> (f64, f64) {
    let command = json!({"command": "sleep 300 & sleep 300"}).to_string();
    let call: Response = serde_json::from_value(
        json!({"events": [{"toolCall": {"id": "c", "name": "run_command", "arguments": command}}]}),
    )
    .unwrap();
    let mock = MockLlm::start(script(vec![call; runs])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(&mock, dir.path());
    let session =
        client.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))["result"]["sessionId"]
            .clone();
    let mut latencies = Vec::new();
    for _ in 0..runs {
        let prompt = client.send(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "sleep"}]}),
        );
        client.until(|f| f.contains(r#""status":"in_progress""#));
        std::thread::sleep(Duration::from_millis(30)); // let the shell start its children
        let started = Instant::now();
        client.engine.send(&json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}).to_string()).unwrap();
        let answer = format!(r#""id":{prompt},"result":{{"stopReason":"cancelled"}}"#);
        client.until(|f| f.contains(&answer));
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
    }
    client.engine.close().unwrap();
    (median(latencies.clone()), percentile(latencies, 0.99))
}

/// `session/load` of a session whose log holds `events` events (tool calls of one turn:
/// `tool_call`, `in_progress`, `completed`, `plan` each), replayed by a fresh engine.
fn replay(events: usize, runs: usize) -> (f64, usize) {
    let calls = events / 4;
    let todo = json!({"todos": [{"content": "step", "status": "pending"}]}).to_string();
    let tool_calls: Vec<Value> = (0..calls)
        .map(|i| json!({"toolCall": {"id": format!("c{i}"), "name": "todo", "arguments": todo}}))
        .collect();
    let responses = vec![
        serde_json::from_value(json!({"events": tool_calls})).unwrap(),
        serde_json::from_value(json!({"events": [{"text": "done"}]})).unwrap(),
    ];
    let mock = MockLlm::start(script(responses)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = {
        let mut client = Client::start(&mock, dir.path());
        let session = client.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))["result"]["sessionId"].clone();
        client.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "plan"}]}),
        );
        client.engine.close().unwrap();
        session
    };
    let mut times = Vec::new();
    let mut replayed = 0;
    for _ in 0..runs {
        let mut client = Client::start(&mock, dir.path());
        let started = Instant::now();
        let id = client.send(
            "session/load",
            json!({"sessionId": session, "cwd": "/tmp", "mcpServers": []}),
        );
        let answer = format!(r#""id":{id},"result""#);
        replayed = client.until(|f| f.contains(&answer)) - 1;
        times.push(started.elapsed().as_secs_f64() * 1e3);
        client.engine.close().unwrap();
    }
    (median(times), replayed)
}

fn median(v: Vec<f64>) -> f64 {
    percentile(v, 0.5)
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (tokens, runs, cancels) = if quick {
        (2_000, 2, 3)
    } else {
        (100_000, 5, 50)
    };
    let (per_token, turn_ms, raw_ms) = token_overhead(tokens, runs);
    let (cancel_median, cancel_p99) = cancel_latency(cancels);
    let (replay_ms, replayed) = replay(if quick { 400 } else { 10_000 }, if quick { 2 } else { 5 });
    println!("| Figure (in-process, file store, mock LLM) | Value |");
    println!("|---|---|");
    println!(
        "| Engine overhead per streamed token ({tokens} tokens, median of {runs}) | {per_token:.2} µs |"
    );
    println!("|   turn: prompt → answer | {turn_ms:.1} ms |");
    println!("|   the same stream read raw off the socket | {raw_ms:.1} ms |");
    println!(
        "| `session/cancel` → `cancelled` with a live `sleep` tree (median of {cancels}) | {cancel_median:.2} ms |"
    );
    println!("| … p99 | {cancel_p99:.2} ms |");
    println!(
        "| `session/load` replaying {replayed} events (fresh engine, median of runs) | {replay_ms:.1} ms |"
    );
}
