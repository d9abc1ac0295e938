//! `session/list` beside `initialize`, through the engine alone (a Rust `Host` that hands
//! each frame to the timing thread): the round trip of the first page of a file store of 20
//! sessions, and of one of 10,000 (spread over 100 working directories) without and with a
//! `cwd` filter, and of an empty file store and an empty `:memory:` one (what the file costs a
//! request that finds nothing), against that of a request answered at once. The per-host figures (C, Node,
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

/// An engine on a store of `sessions` sessions (`data_dir`: a directory, or `:memory:`),
/// spread over 100 working directories, initialized; and the id its next request takes.
fn engine_with(sessions: usize, data_dir: &str) -> (Engine, Receiver<String>, u64) {
    let config = format!(
        r#"{{"dataDir":{data_dir:?},"providers":{{"openai":{{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}}}}"#
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

/// One kind of request timed: on which store (an index of `stores`), which method with
/// which params.
struct Case {
    name: &'static str,
    store: usize,
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
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let dir = |i: usize| dirs[i].path().to_str().unwrap().to_string();
    // 0: 20 sessions, 1: `large` sessions, 2: an empty file store, 3: an empty `:memory:` one:
    // the last two tell what a file store costs a request that finds nothing.
    let mut stores = vec![
        engine_with(20, &dir(0)),
        engine_with(large, &dir(1)),
        engine_with(0, &dir(2)),
        engine_with(0, ":memory:"),
    ];
    let case =
        |name: &'static str, store: usize, method: &'static str, params: &'static str| Case {
            name,
            store,
            method,
            params,
        };
    let cases = [
        case("initialize", 0, "initialize", INIT),
        case("session/list, 20 sessions", 0, "session/list", "{}"),
        case("session/list, first 50 of {large}", 1, "session/list", "{}"),
        case(
            "session/list, first 50 of {large} with a `cwd` of 1 in 100",
            1,
            "session/list",
            r#"{"cwd":"/tmp/w7"}"#,
        ),
        case("session/list, empty file store", 2, "session/list", "{}"),
        case(
            "session/list, empty `:memory:` store",
            3,
            "session/list",
            "{}",
        ),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    // The cases take turns, round by round, so that a noisy moment hits them all.
    for _ in 0..rounds {
        for (i, case) in cases.iter().enumerate() {
            let (engine, rx, id) = &mut stores[case.store];
            for _ in 0..per_round {
                *id += 1;
                let started = Instant::now();
                round_trip(engine, rx, *id, case.method, case.params);
                times[i].push(started.elapsed());
            }
        }
    }
    for (engine, _, _) in &stores {
        engine.close().unwrap();
    }
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
