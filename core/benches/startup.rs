//! Startup and memory figures of the engine, as markdown tables: spawn of `hearth acp` →
//! `initialize` answered and its RSS then, beside the floor (`spawn_floor`, a Rust binary
//! that reads one line and writes one), the two spawned alternately in one run (`spawn.rs`);
//! and in-process `Engine::start` → `initialize` answered → `session/new` answered, RSS of an
//! idle engine, and RSS with 1,000 idle sessions.
//!
//! Run: `cargo bench -p hearth-core --bench startup` (add `-- --quick` for a smoke run); it
//! builds `hearth` and `spawn_floor` in release first. Numbers, not assertions: the machines
//! are shared and noisy.

#[path = "startup/spawn.rs"]
mod spawn;
#[path = "common/spawned.rs"]
mod spawned;

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

fn config() -> Config {
    Config::from_json(r#"{"dataDir":":memory:","providers":{"openai":{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}"#).unwrap()
}

fn start() -> (Engine, Receiver<String>) {
    let (tx, rx) = mpsc::channel();
    (
        Engine::start(config(), Arc::new(Channel(Mutex::new(tx)))).unwrap(),
        rx,
    )
}

fn call(engine: &Engine, rx: &Receiver<String>, id: u64, method: &str, params: &str) {
    engine
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ))
        .unwrap();
    let wanted = format!(r#""id":{id},"#);
    loop {
        let frame = rx.recv_timeout(Duration::from_secs(10)).expect("answer");
        if frame.contains(&wanted) {
            return;
        }
    }
}

/// Resident set size of this process, from /proc (Linux).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

const INIT: &str = r#"{"protocolVersion":1,"clientCapabilities":{}}"#;
const NEW: &str = r#"{"cwd":"/tmp","mcpServers":[]}"#;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 5 } else { 200 };
    let (sessions, many) = if quick { (100, 1000) } else { (1000, 10_000) };

    spawn::report(if quick { 10 } else { 200 });
    println!();

    // Memory first, in a process that has not run an engine yet.
    let baseline = rss_kib();
    let (engine, rx) = start();
    call(&engine, &rx, 1, "initialize", INIT);
    std::thread::sleep(Duration::from_millis(200));
    let idle = rss_kib();
    for i in 0..sessions {
        call(&engine, &rx, 10 + i, "session/new", NEW);
    }
    std::thread::sleep(Duration::from_millis(200));
    let with_sessions = rss_kib();
    for i in sessions..many {
        call(&engine, &rx, 10 + i, "session/new", NEW);
    }
    std::thread::sleep(Duration::from_millis(200));
    let with_many = rss_kib();
    engine.close().unwrap();

    let (mut to_init, mut to_new) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let started = Instant::now();
        let (engine, rx) = start();
        call(&engine, &rx, 1, "initialize", INIT);
        to_init.push(started.elapsed());
        call(&engine, &rx, 2, "session/new", NEW);
        to_new.push(started.elapsed());
        engine.close().unwrap();
    }

    println!("| Figure (in-process, `:memory:` store) | Value |");
    println!("|---|---|");
    println!(
        "| `Engine::start` → `initialize` answered (median of {runs}) | {:.2} ms |",
        ms(median(to_init))
    );
    println!(
        "| `Engine::start` → `session/new` answered (median of {runs}) | {:.2} ms |",
        ms(median(to_new))
    );
    println!(
        "| RSS of the process before any engine | {:.1} MiB |",
        baseline as f64 / 1024.0
    );
    println!(
        "| RSS added by an idle, initialized engine | {:.1} MiB |",
        idle.saturating_sub(baseline) as f64 / 1024.0
    );
    println!(
        "| RSS per idle session ({sessions} live sessions) | {:.1} KiB |",
        with_sessions.saturating_sub(idle) as f64 / sessions as f64
    );
    println!(
        "| RSS with {sessions} idle sessions (whole process) | {:.1} MiB |",
        with_sessions as f64 / 1024.0
    );
    println!(
        "| RSS per idle session ({many} live sessions) | {:.1} KiB |",
        with_many.saturating_sub(idle) as f64 / many as f64
    );
    println!(
        "| RSS with {many} idle sessions (whole process) | {:.1} MiB |",
        with_many as f64 / 1024.0
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
