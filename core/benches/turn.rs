//! Turn figures, in-process, against the scripted mock LLM:
//! - engine overhead per streamed model token (the mock streaming as fast as it can), as
//!   (prompt → answer) minus the time to read the same stream straight off the socket;
//! - cancel latency: `session/cancel` → `stopReason: cancelled` while `run_command` runs a
//!   live `sleep` process tree;
//! - engine time per model step in sessions of 100, 1,000 and 10,000 logged events: a
//!   one-step turn (prompt → answer) minus the same reply read raw off the socket;
//! - how much of each request of a 30-step tool loop is a byte prefix of the next one (what
//!   a provider's prompt cache can reuse);
//! - one `/compact` after 20 reads of an 8 KB file: the request bytes before it, of the
//!   summary request, and of the first request after it.
//!
//! Run: `cargo bench -p hearth-core --bench turn` (`-- --quick` for a smoke run;
//! `BENCH_DATA=:memory:` to take SQLite out of the figure).
//! Numbers, not assertions: the machines are shared and noisy.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

mod common;

use common::{Client, median, percentile};
use hearth_mock_llm::{MockLlm, Response, Script};
use serde_json::{Value, json};

fn script(responses: Vec<Response>) -> Script {
    Script { responses }
}

fn repeat(count: u64) -> Response {
    serde_json::from_value(json!({"events": [{"repeat": {"text": "tok ", "count": count}}]}))
        .unwrap()
}

/// Reads one scripted stream straight off the socket: the cost of the server and the wire.
fn raw_stream(mock: &MockLlm) -> Duration {
    raw_request(
        mock,
        &json!({"model": "bench", "stream": true, "messages": []}).to_string(),
    )
}

/// Sends `body` as a model request straight from a socket and reads the scripted stream:
/// what the server and the wire cost for a request of that size.
fn raw_request(mock: &MockLlm, body: &str) -> Duration {
    let address = mock
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();
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
    // The command runs sandboxed, as a user's would: its workspace must not hold the data dir
    // (the sandbox refuses such a root), so it is a directory of its own, not /tmp.
    let project = tempfile::tempdir().unwrap();
    let cwd = project.path().to_str().unwrap();
    let session =
        client.call("session/new", json!({"cwd": cwd, "mcpServers": []}))["result"]["sessionId"]
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
    let responses = vec![todo_calls(events), text_reply("done")];
    let mock = MockLlm::start(script(responses)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = {
        let mut client = Client::start(&mock, dir.path());
        let session = session_with_events(&mut client);
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

/// A session whose log holds about `events` events: one prompt whose answer is `events / 4`
/// `todo` calls (`tool_call`, `in_progress`, `completed`, `plan` each), then "done" — the
/// mock's next two responses must be `todo_calls(events)` and a text.
fn session_with_events(client: &mut Client) -> Value {
    let session =
        client.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))["result"]["sessionId"]
            .clone();
    client.call(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "plan"}]}),
    );
    session
}

fn todo_calls(events: usize) -> Response {
    let todo = json!({"todos": [{"content": "step", "status": "pending"}]}).to_string();
    let tool_calls: Vec<Value> = (0..events / 4)
        .map(|i| json!({"toolCall": {"id": format!("c{i}"), "name": "todo", "arguments": todo}}))
        .collect();
    serde_json::from_value(json!({"events": tool_calls})).unwrap()
}

fn text_reply(text: &str) -> Response {
    serde_json::from_value(json!({"events": [{"text": text}]})).unwrap()
}

/// Engine time of one model step in a session of about `events` logged events: the median
/// of `runs` one-step turns, each less the time a raw socket takes to send the same request
/// body and read the same reply (the mock parsing a large body is not the engine's time).
fn step_cost(events: usize, runs: usize) -> f64 {
    let mut responses = vec![todo_calls(events), text_reply("done")];
    // Each run: one reply for the raw read, one for the turn.
    responses.extend((0..2 * runs).map(|_| text_reply("ok")));
    let mock = MockLlm::start(script(responses)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(&mock, dir.path());
    let session = session_with_events(&mut client);
    let mut costs = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let answer = client.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "step"}]}),
        );
        let turn = started.elapsed();
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        let sent = mock.requests().pop().unwrap().raw;
        let raw = raw_request(&mock, &sent);
        costs.push((turn.as_secs_f64() - raw.as_secs_f64()) * 1e3);
    }
    client.engine.close().unwrap();
    median(costs)
}

/// Over a 30-step tool loop: the share of each request's bytes (but its closing `]}`) that
/// the next request begins with — mean and least.
fn prefix_share() -> (f64, f64) {
    let read = json!({"path": "/tmp"}).to_string();
    let mut responses: Vec<Response> = (0..30)
        .map(|i| {
            serde_json::from_value(json!({"events": [{"toolCall": {"id": format!("c{i}"), "name": "list", "arguments": read}}]}))
                .unwrap()
        })
        .collect();
    responses.push(text_reply("done"));
    let mock = MockLlm::start(script(responses)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(&mock, dir.path());
    let session =
        client.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))["result"]["sessionId"]
            .clone();
    client.call(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "look 30 times"}]}),
    );
    client.engine.close().unwrap();
    let bodies: Vec<String> = mock.requests().into_iter().map(|r| r.raw).collect();
    let shares: Vec<f64> = bodies
        .windows(2)
        .map(|pair| {
            let previous = pair[0].strip_suffix("]}").unwrap_or(&pair[0]).as_bytes();
            let common = previous
                .iter()
                .zip(pair[1].as_bytes())
                .take_while(|(a, b)| a == b)
                .count();
            common as f64 / previous.len() as f64
        })
        .collect();
    let least = shares.iter().copied().fold(1.0, f64::min);
    (shares.iter().sum::<f64>() / shares.len() as f64, least)
}

/// Request bytes around one `/compact`: the last step before it, the summary request, and
/// the first request after it.
fn compaction_sizes() -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.txt");
    std::fs::write(&file, format!("{}\n", "x".repeat(79)).repeat(100)).unwrap();
    let read = json!({"path": file}).to_string();
    let mut responses: Vec<Response> = (0..20)
        .map(|i| {
            serde_json::from_value(json!({"events": [{"toolCall": {"id": format!("c{i}"), "name": "read", "arguments": read}}]}))
                .unwrap()
        })
        .collect();
    responses.push(text_reply("read."));
    responses.push(text_reply(
        "## Goal\nread big.txt twenty times\n## Current state\ndone",
    ));
    responses.push(text_reply("ok"));
    let mock = MockLlm::start(script(responses)).unwrap();
    let mut client = Client::start(&mock, dir.path());
    let cwd = dir.path().to_str().unwrap();
    let session =
        client.call("session/new", json!({"cwd": cwd, "mcpServers": []}))["result"]["sessionId"]
            .clone();
    for text in ["read it 20 times", "/compact", "next"] {
        client.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        );
    }
    client.engine.close().unwrap();
    let sizes: Vec<usize> = mock.requests().iter().map(|r| r.raw.len()).collect();
    assert_eq!(
        sizes.len(),
        23,
        "20 reads, the answer, the summary, the next step"
    );
    (sizes[20], sizes[21], sizes[22])
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
    let step_runs = if quick { 3 } else { 30 };
    let steps: Vec<(usize, f64)> = [100, 1_000, 10_000]
        .into_iter()
        .map(|events| (events, step_cost(events, step_runs)))
        .collect();
    let (share_mean, share_least) = prefix_share();
    let (before, summary, after) = compaction_sizes();
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
    for (events, ms) in steps {
        println!(
            "| Engine time per model step, session of {events} logged events (median of {step_runs}) | {ms:.2} ms |"
        );
    }
    println!(
        "| Share of a request the next one begins with, 30-step tool loop (mean / least) | {:.1}% / {:.1}% |",
        share_mean * 100.0,
        share_least * 100.0
    );
    println!(
        "| `/compact` after 20 reads of 8 KB: request bytes before / the summary request / after | {before} / {summary} / {after} |"
    );
}
