//! Turn figures, in-process, against the scripted mock LLM:
//! - the engine's time per streamed model token (the mock streaming as fast as it can),
//!   prompt → answer, for an OpenAI and an Anthropic stream, beside two floors: the same
//!   stream fetched with reqwest and decoded into SSE events as the providers do
//!   (`llm/sse.rs` `events`: reads cut into lines, then `eventsource-stream`), no engine; and
//!   that plus each event's JSON parsed into the provider's delta type (what any consumer
//!   must do to have a token's text) — and the overhead over reading the stream raw off the
//!   socket;
//! - cancel latency: `session/cancel` → `stopReason: cancelled` while `run_command` runs a
//!   live `sleep` process tree;
//! - engine time per model step in a session of ~100 messages and one of ~3,000, interleaved:
//!   a tool call's reply, last byte in → the next request's first byte out, timed by a relay
//!   between the engine and the mock (`turn/tap.rs`); and the heap the live ~3,000-message
//!   session holds — what closing it frees, by a counting allocator (`turn/counting.rs`) —
//!   against the bytes of its context (its last request);
//! - how much of each request of a 30-step tool loop is a byte prefix of the next one (what
//!   a provider's prompt cache can reuse);
//! - one `/compact` after 20 reads of an 8 KB file: the request bytes before it, of the
//!   summary request, and of the first request after it.
//!
//! Run: `cargo bench -p hearth-core --bench turn` (`-- --quick` for a smoke run, `-- --part
//! steps` for one part; `BENCH_DATA=:memory:` to take SQLite out of the figure; `BENCH_API=OpenAi`
//! or `Anthropic` for one stream of the tokens part, `BENCH_API=Anthropic` for the steps part in
//! Anthropic's dialect).
//! Numbers, not assertions: the machines are shared and noisy.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod common;
#[path = "turn/counting.rs"]
mod counting;
#[path = "turn/tap.rs"]
mod tap;

use common::{Api, Client, median, percentile};
use futures::StreamExt;
use hearth_core::{AnthropicTextDelta, OpenAiTextChunk, sse_events};
use hearth_mock_llm::{MockLlm, Response, Script};
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

fn script(responses: Vec<Response>) -> Script {
    Script { responses }
}

fn repeat(count: u64) -> Response {
    serde_json::from_value(json!({"events": [{"repeat": {"text": "tok ", "count": count}}]}))
        .unwrap()
}

/// The mock's `host:port`.
fn address(mock: &MockLlm) -> String {
    mock.base_url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string()
}

const STREAM_BODY: &str = r#"{"model":"bench","stream":true,"messages":[]}"#;

/// Reads one scripted stream straight off the socket: the cost of the server and the wire.
fn raw_stream(mock: &MockLlm, api: Api) -> Duration {
    let started = Instant::now();
    post(mock, &format!("/v1{}", api.path()), STREAM_BODY);
    started.elapsed()
}

/// Sends `body` to the mock's `path` straight from a socket and reads the whole answer.
fn post(mock: &MockLlm, path: &str, body: &str) {
    let address = address(mock);
    let mut socket = TcpStream::connect(&address).unwrap();
    write!(socket, "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut sink = Vec::new();
    socket.read_to_end(&mut sink).unwrap();
}

/// An HTTP client as the providers' (reqwest on rustls with *ring*), for plain HTTP only.
fn http_client() -> reqwest::Client {
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .unwrap()
}

/// What a floor does with each SSE event.
#[derive(Clone, Copy, PartialEq)]
enum Floor {
    /// Nothing: the stream decoded into SSE events alone.
    Sse,
    /// Its JSON parsed into the provider's delta type (the type the provider's hot path
    /// parses a text delta into).
    Json,
}

/// Whether an event's data parses into `api`'s delta type.
fn parses(api: Api, data: &str) -> bool {
    match api {
        Api::OpenAi => serde_json::from_str::<OpenAiTextChunk>(data).is_ok(),
        Api::Anthropic => serde_json::from_str::<AnthropicTextDelta>(data).is_ok(),
    }
}

/// A floor of a streamed answer: one scripted stream fetched and decoded into SSE events
/// as the providers decode them (`llm/sse.rs` `events`), and with `Floor::Json` each event's
/// JSON parsed into the provider's delta type, with nothing else done.
/// Returns the time and the events decoded (parsed, with `Floor::Json`).
fn sse_floor(
    mock: &MockLlm,
    runtime: &tokio::runtime::Runtime,
    http: &reqwest::Client,
    api: Api,
    floor: Floor,
) -> (Duration, usize) {
    runtime.block_on(async {
        let started = Instant::now();
        let response = http
            .post(format!("{}{}", mock.base_url(), api.path()))
            .header("content-type", "application/json")
            .body(STREAM_BODY)
            .send()
            .await
            .unwrap();
        let mut events = std::pin::pin!(sse_events(response.bytes_stream()));
        let mut decoded = 0;
        while let Some(event) = events.next().await {
            let event = event.unwrap();
            if floor == Floor::Sse || parses(api, &event.data) {
                decoded += 1;
            }
        }
        (started.elapsed(), decoded)
    })
}

/// Per streamed token, medians over `runs`: the engine's time (prompt → answer), the two
/// floors, and the engine's overhead over the raw socket read.
struct TokenCost {
    turn_us: f64,
    floor_us: f64,
    json_floor_us: f64,
    overhead_us: f64,
    turn_ms: f64,
    floor_ms: f64,
    json_floor_ms: f64,
    raw_ms: f64,
}

fn token_cost(api: Api, tokens: u64, runs: usize) -> TokenCost {
    let responses = (0..4 * runs).map(|_| repeat(tokens)).collect();
    let mock = MockLlm::start(script(responses)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start_api(api, &mock.base_url(), dir.path());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = http_client();
    let (mut turns, mut raws) = (Vec::new(), Vec::new());
    let (mut floors, mut json_floors) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        raws.push(raw_stream(&mock, api).as_secs_f64());
        for (floor, times) in [(Floor::Sse, &mut floors), (Floor::Json, &mut json_floors)] {
            let (time, decoded) = sse_floor(&mock, &runtime, &http, api, floor);
            assert!(
                decoded as u64 >= tokens,
                "{decoded} events for {tokens} tokens"
            );
            times.push(time.as_secs_f64());
        }
        let session = client.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))["result"]["sessionId"].clone();
        let started = Instant::now();
        let answer = client.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        );
        turns.push(started.elapsed().as_secs_f64());
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    }
    client.engine.close().unwrap();
    let overheads = turns.iter().zip(&raws).map(|(t, r)| t - r).collect();
    let per_token = |seconds: f64| seconds * 1e6 / tokens as f64;
    TokenCost {
        turn_us: per_token(median(turns.clone())),
        floor_us: per_token(median(floors.clone())),
        json_floor_us: per_token(median(json_floors.clone())),
        overhead_us: per_token(median(overheads)),
        turn_ms: median(turns) * 1e3,
        floor_ms: median(floors) * 1e3,
        json_floor_ms: median(json_floors) * 1e3,
        raw_ms: median(raws) * 1e3,
    }
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

static CALLS: AtomicU64 = AtomicU64::new(0);

/// A reply calling `todo`, the cheapest tool step (no file, no process): two messages, the
/// call and its result.
fn todo_step() -> Response {
    let id = format!("s{}", CALLS.fetch_add(1, Ordering::Relaxed));
    let todo = json!({"todos": [{"content": "step", "status": "pending"}]}).to_string();
    serde_json::from_value(
        json!({"events": [{"toolCall": {"id": id, "name": "todo", "arguments": todo}}]}),
    )
    .unwrap()
}

/// What one prompt of tool steps showed: the engine's time for each step (µs), and the
/// messages and bytes of its last request.
struct Stepped {
    gaps: Vec<f64>,
    messages: usize,
    bytes: usize,
}

/// One prompt of `steps` todo steps, then a text, through the tap.
fn prompt_steps(
    client: &mut Client,
    mock: &MockLlm,
    tap: &tap::Tap,
    session: &Value,
    steps: usize,
) -> Stepped {
    // The mock keeps no request of an earlier prompt (a long session's would add up).
    post(mock, "/_mock/reset", "{}");
    for _ in 0..steps {
        mock.push(todo_step());
    }
    mock.push(text_reply("done"));
    tap.take_gaps();
    let answer = client.call(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "step"}]}),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let gaps = tap.take_gaps();
    assert_eq!(gaps.len(), steps, "one gap per tool step");
    let last = mock.last_request().unwrap();
    Stepped {
        gaps: gaps.iter().map(|g| g.as_secs_f64() * 1e6).collect(),
        messages: last.body["messages"].as_array().unwrap().len(),
        bytes: last.raw.len(),
    }
}

/// Steps in a short and a long session, and what the long one keeps.
struct Flatness {
    short_messages: usize,
    short_us: f64,
    long_messages: usize,
    long_us: f64,
    /// The median over rounds of the long step's median over the short one's.
    ratio: f64,
    steps: usize,
    /// Heap bytes closing the long session frees, and the bytes of its last request.
    kept: isize,
    context: usize,
}

/// The dialect `BENCH_API` names (`OpenAi` or `Anthropic`), if any: the one stream the tokens
/// part measures, the dialect the steps part runs (OpenAI's without).
fn bench_api() -> Option<Api> {
    match std::env::var("BENCH_API").as_deref() {
        Ok("OpenAi") => Some(Api::OpenAi),
        Ok("Anthropic") => Some(Api::Anthropic),
        _ => None,
    }
}

/// Prompts of this many tool steps (the 50th request of a prompt is its text answer: the
/// engine's default `maxTurnRequests`).
const STEPS_PER_PROMPT: usize = 49;

/// Engine time per step at ~100 messages and at ~`long_prompts` × 100, in `rounds` rounds
/// of five steps in each session, alternately.
fn step_flatness(long_prompts: usize, rounds: usize) -> Flatness {
    let mock = MockLlm::start(script(Vec::new())).unwrap();
    let tap = tap::Tap::start(address(&mock));
    let dir = tempfile::tempdir().unwrap();
    let api = bench_api().unwrap_or(Api::OpenAi);
    let mut client = Client::start_api(api, &tap.base_url(), dir.path());
    let new = |client: &mut Client| {
        client.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}))["result"]["sessionId"]
            .clone()
    };
    // ~64 messages, so that the rounds measure it around 100.
    let short = new(&mut client);
    prompt_steps(&mut client, &mock, &tap, &short, 31);
    let long = new(&mut client);
    let mut built = None;
    for _ in 0..long_prompts {
        built = Some(prompt_steps(
            &mut client,
            &mock,
            &tap,
            &long,
            STEPS_PER_PROMPT,
        ));
    }
    let context = built.map_or(0, |b| b.bytes);
    // What the live session holds is what closing it frees (the store's page cache, the
    // engine's and the mock's buffers stay); the rounds below bring it back from its log.
    counting::start();
    client.call("session/close", json!({"sessionId": long}));
    // The session's task lets go of it once the answer is out.
    std::thread::sleep(Duration::from_millis(500));
    let kept = -counting::stop();
    let (mut short_gaps, mut long_gaps, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut short_messages, mut long_messages) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let s = prompt_steps(&mut client, &mock, &tap, &short, 5);
        let l = prompt_steps(&mut client, &mock, &tap, &long, 5);
        ratios.push(median(l.gaps.clone()) / median(s.gaps.clone()));
        short_gaps.extend(s.gaps);
        long_gaps.extend(l.gaps);
        short_messages.push(s.messages as f64);
        long_messages.push(l.messages as f64);
    }
    client.engine.close().unwrap();
    Flatness {
        short_messages: median(short_messages) as usize,
        short_us: median(short_gaps.clone()),
        long_messages: median(long_messages) as usize,
        long_us: median(long_gaps),
        ratio: median(ratios),
        steps: short_gaps.len(),
        kept,
        context,
    }
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

/// A part of the bench: measures and prints its rows (`true`: quick).
type Part = fn(bool);

/// The parts of the bench, by the name `--part NAME` runs alone (to profile one).
const PARTS: [(&str, Part); 6] = [
    ("tokens", print_tokens),
    ("cancel", print_cancel),
    ("replay", print_replay),
    ("steps", print_steps),
    ("prefix", print_prefix),
    ("compaction", print_compaction),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let only = args
        .iter()
        .position(|a| a == "--part")
        .and_then(|i| args.get(i + 1));
    println!("| Figure (in-process, file store, mock LLM) | Value |");
    println!("|---|---|");
    for (name, part) in PARTS {
        if only.is_none_or(|only| only == name) {
            part(quick);
        }
    }
}

fn print_tokens(quick: bool) {
    let (tokens, runs) = if quick { (2_000, 2) } else { (100_000, 5) };
    // One stream alone, to profile it, when `BENCH_API` names one.
    let only = bench_api();
    for api in [Api::OpenAi, Api::Anthropic] {
        if only.is_none_or(|only| only == api) {
            print_token_cost(api, tokens, runs);
        }
    }
}

fn print_token_cost(api: Api, tokens: u64, runs: usize) {
    let t = token_cost(api, tokens, runs);
    println!(
        "| Engine time per streamed token, prompt → answer, {api:?} stream ({tokens} tokens, median of {runs}) | {:.2} µs ({:.1} ms) |",
        t.turn_us, t.turn_ms
    );
    println!(
        "|   floor: the same stream fetched and SSE-decoded alone (reqwest + the providers' SSE parser) | {:.2} µs ({:.1} ms) |",
        t.floor_us, t.floor_ms
    );
    println!(
        "|   floor with JSON: the same, each event's JSON parsed into the provider's delta type | {:.2} µs ({:.1} ms) |",
        t.json_floor_us, t.json_floor_ms
    );
    println!(
        "|   ratio engine / floor, / floor with JSON (the goal's) | {:.2}× / {:.2}× |",
        t.turn_us / t.floor_us,
        t.turn_us / t.json_floor_us
    );
    println!(
        "|   overhead over the stream read raw off the socket ({:.1} ms) | {:.2} µs |",
        t.raw_ms, t.overhead_us
    );
}

fn print_cancel(quick: bool) {
    let cancels = if quick { 3 } else { 50 };
    let (median, p99) = cancel_latency(cancels);
    println!(
        "| `session/cancel` → `cancelled` with a live `sleep` tree (median of {cancels}) | {median:.2} ms |"
    );
    println!("| … p99 | {p99:.2} ms |");
}

fn print_replay(quick: bool) {
    let (replay_ms, replayed) = replay(if quick { 400 } else { 10_000 }, if quick { 2 } else { 5 });
    println!(
        "| `session/load` replaying {replayed} events (fresh engine, median of runs) | {replay_ms:.1} ms |"
    );
}

fn print_steps(quick: bool) {
    let flat = if quick {
        step_flatness(3, 2)
    } else {
        step_flatness(30, 8)
    };
    let steps = flat.steps;
    println!(
        "| Engine time per model step (reply's last byte in → next request's first byte out), ~{} messages (median of {steps}) | {:.0} µs |",
        flat.short_messages, flat.short_us
    );
    println!(
        "|   the same, ~{} messages (median of {steps}, interleaved) | {:.0} µs |",
        flat.long_messages, flat.long_us
    );
    println!(
        "|   ratio long / short (median of the rounds' ratios) | {:.2}× |",
        flat.ratio
    );
    println!(
        "| Heap the live long session holds (freed by `session/close`) / the bytes of its context (its last request) | {:.2} MB / {:.2} MB = {:.2}× |",
        flat.kept as f64 / 1e6,
        flat.context as f64 / 1e6,
        flat.kept as f64 / flat.context as f64
    );
}

fn print_prefix(_quick: bool) {
    let (mean, least) = prefix_share();
    println!(
        "| Share of a request the next one begins with, 30-step tool loop (mean / least) | {:.1}% / {:.1}% |",
        mean * 100.0,
        least * 100.0
    );
}

fn print_compaction(_quick: bool) {
    let (before, summary, after) = compaction_sizes();
    println!(
        "| `/compact` after 20 reads of 8 KB: request bytes before / the summary request / after | {before} / {summary} / {after} |"
    );
}
