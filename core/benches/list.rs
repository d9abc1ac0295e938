//! `session/list` beside `initialize`, through the engine alone (a Rust `Host` that hands
//! each frame to the timing thread): the round trip of the first page of a file store of 20
//! sessions, and of one of 10,000 (spread over 100 working directories) without and with a
//! `cwd` filter, against that of a request answered at once. The per-host figures (C, Node,
//! Python, stdio) are `benches/roundtrip`'s; this one isolates what the engine adds.
//!
//! Run: `cargo bench -p hearth-core --bench list` (`-- --quick` for a smoke run).
//! Numbers, not assertions: the machines are shared and noisy.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_core::{Config, Engine, Host};

struct Channel(Mutex<Sender<String>>);

impl Host for Channel {
    fn deliver(&self, frame: &str) {
        let _ = self.0.lock().unwrap().send(frame.to_string());
    }
}

/// Sends request `id` and waits for its answer.
fn round_trip(engine: &Engine, rx: &Receiver<String>, id: u64, method: &str, params: &str) {
    engine
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ))
        .unwrap();
    let wanted = format!(r#""id":{id},"#);
    while !rx
        .recv_timeout(Duration::from_secs(10))
        .expect("an answer")
        .contains(&wanted)
    {}
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let at = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[at].as_secs_f64() * 1e6
}

/// An engine on a file store of `sessions` sessions, spread over 100 working directories,
/// initialized; and the id its next request takes.
fn engine_with(sessions: usize, dir: &std::path::Path) -> (Engine, Receiver<String>, u64) {
    let config = format!(
        r#"{{"dataDir":{dir:?},"providers":{{"openai":{{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}}}}"#
    );
    let (tx, rx) = mpsc::channel();
    let engine = Engine::start(
        Config::from_json(&config).unwrap(),
        Arc::new(Channel(Mutex::new(tx))),
    )
    .unwrap();
    round_trip(&engine, &rx, 1, "initialize", INIT);
    for n in 0..sessions {
        let params = format!(r#"{{"cwd":"/tmp/w{}","mcpServers":[]}}"#, n % 100);
        round_trip(&engine, &rx, 2 + n as u64, "session/new", &params);
    }
    // The writes behind the answers reach the file before the timing starts.
    std::thread::sleep(Duration::from_millis(500));
    (engine, rx, 2 + sessions as u64)
}

/// One kind of request timed: on which store, which method with which params.
struct Case {
    name: &'static str,
    on_big: bool,
    method: &'static str,
    params: &'static str,
}

const INIT: &str = r#"{"protocolVersion":1,"clientCapabilities":{}}"#;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, per_round, large) = if quick {
        (2, 200, 1_000)
    } else {
        (5, 4000, 10_000)
    };
    let (small_dir, large_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (small, small_rx, mut small_id) = engine_with(20, small_dir.path());
    let (big, big_rx, mut big_id) = engine_with(large, large_dir.path());
    let case =
        |name: &'static str, on_big: bool, method: &'static str, params: &'static str| Case {
            name,
            on_big,
            method,
            params,
        };
    let cases = [
        case("initialize", false, "initialize", INIT),
        case("session/list, 20 sessions", false, "session/list", "{}"),
        case(
            "session/list, first 50 of {large}",
            true,
            "session/list",
            "{}",
        ),
        case(
            "session/list, first 50 of {large} with a `cwd` of 1 in 100",
            true,
            "session/list",
            r#"{"cwd":"/tmp/w7"}"#,
        ),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    // The cases take turns, round by round, so that a noisy moment hits them all.
    for _ in 0..rounds {
        for (i, case) in cases.iter().enumerate() {
            let (engine, rx, id) = match case.on_big {
                true => (&big, &big_rx, &mut big_id),
                false => (&small, &small_rx, &mut small_id),
            };
            for _ in 0..per_round {
                *id += 1;
                let started = Instant::now();
                round_trip(engine, rx, *id, case.method, case.params);
                times[i].push(started.elapsed());
            }
        }
    }
    small.close().unwrap();
    big.close().unwrap();
    let n = rounds * per_round;
    println!(
        "| round trip through a Rust host, file stores ({n} each, {rounds} interleaved rounds) | median µs | p99 µs | ÷ 20 sessions |"
    );
    println!("|---|---|---|---|");
    let base = percentile(&mut times[1], 0.5);
    for (case, t) in cases.iter().zip(times.iter_mut()) {
        let median = percentile(t, 0.5);
        println!(
            "| {} | {median:.1} | {:.1} | {:.2}× |",
            case.name.replace("{large}", &large.to_string()),
            percentile(t, 0.99),
            median / base
        );
    }
}
