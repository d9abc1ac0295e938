//! `session/list` beside `initialize`, through the engine alone (a Rust `Host` that hands
//! each frame to the timing thread): the round trip of the first page of a file store of 100
//! sessions, against that of a request answered at once. The per-host figures (C, Node,
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

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (rounds, per_round) = if quick { (2, 200) } else { (5, 4000) };
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        r#"{{"dataDir":{:?},"providers":{{"openai":{{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}}}}"#,
        dir.path()
    );
    let (tx, rx) = mpsc::channel();
    let engine = Engine::start(
        Config::from_json(&config).unwrap(),
        Arc::new(Channel(Mutex::new(tx))),
    )
    .unwrap();
    let init = r#"{"protocolVersion":1,"clientCapabilities":{}}"#;
    let mut id = 0;
    let mut next = || {
        id += 1;
        id
    };
    round_trip(&engine, &rx, next(), "initialize", init);
    for _ in 0..100 {
        round_trip(
            &engine,
            &rx,
            next(),
            "session/new",
            r#"{"cwd":"/tmp","mcpServers":[]}"#,
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut times = [Vec::new(), Vec::new()];
    // The two methods take turns, round by round, so that a noisy moment hits both.
    for _ in 0..rounds {
        for (i, (method, params)) in [("initialize", init), ("session/list", "{}")]
            .into_iter()
            .enumerate()
        {
            for _ in 0..per_round {
                let id = next();
                let started = Instant::now();
                round_trip(&engine, &rx, id, method, params);
                times[i].push(started.elapsed());
            }
        }
    }
    engine.close().unwrap();
    let n = rounds * per_round;
    println!(
        "| round trip through a Rust host ({n} each, {rounds} interleaved rounds) | median µs | p99 µs |"
    );
    println!("|---|---|---|");
    for (name, t) in ["initialize", "session/list (50 of 100 sessions)"]
        .iter()
        .zip(times.iter_mut())
    {
        println!(
            "| {name} | {:.1} | {:.1} |",
            percentile(t, 0.5),
            percentile(t, 0.99)
        );
    }
}
