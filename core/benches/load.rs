//! `session/load` of a long session as an editor sees it: a fresh `hearth acp` (release)
//! spawned on a file store holding one session of about 100,000 logged events, `initialize`,
//! then `session/load` → its answer (every replayed `session/update` before it); the time of
//! the load, and the process's memory — VmRSS once initialized, its peak (VmHWM) once the
//! load is answered, and the difference: what replaying the log costs in memory; beside it
//! `session/resume` of the same session, which restores it without the replay.
//!
//! The session is recorded by the real engine against the scripted mock LLM: one prompt
//! whose answer is 25,000 `todo` calls, each logging four events (the call, its in-progress
//! and completed updates, the plan). With `HEARTH_BENCH_BASE` (another build's `hearth`, as
//! benches/compare.sh makes) that build loads the same store, taking turns with this one.
//!
//! Run: `cargo bench -p hearth-core --bench load` (`-- --quick`: 10,000 events, 2 runs).
//! Numbers, not assertions: the machines are shared and noisy.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Client;
use common::spawned::{self, INITIALIZE, Spawned};
use hearth_mock_llm::{MockLlm, Script};
use serde_json::{Value, json};

/// What one load measured.
struct Load {
    took: Duration,
    frames: usize,
    initialized_kib: u64,
    peak_kib: u64,
}

/// How a run asks and reads: `session/load`, or `session/resume` (the same restore of the
/// session, without the replay: what the replay itself costs is the difference); read as fast
/// as possible, or as a slow client reads (1 ms pause every 100 frames), which leaves the
/// engine frames to hold.
#[derive(Clone, Copy)]
struct Way {
    method: &'static str,
    slow: bool,
}

fn load_once(program: &Path, args: &[String], session: &str, way: Way) -> Load {
    let mut agent = Spawned::start(program, args);
    agent.send(INITIALIZE);
    agent.until_answer(1);
    let initialized_kib = agent.memory_kib("VmRSS");
    let started = Instant::now();
    agent.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": way.method,
            "params": {"sessionId": session, "cwd": "/tmp", "mcpServers": []}})
        .to_string(),
    );
    let frames = match way.slow {
        true => agent.until_answer_paced(2, 100, Duration::from_millis(1)),
        false => agent.until_answer(2),
    };
    let took = started.elapsed();
    let peak_kib = agent.memory_kib("VmHWM");
    agent.finish();
    Load {
        took,
        frames,
        initialized_kib,
        peak_kib,
    }
}

/// Records one session of about `events` events into `data_dir`; its id.
fn record(events: usize, data_dir: &Path) -> String {
    let todo = json!({"todos": [{"content": "step", "status": "pending"}]}).to_string();
    let calls: Vec<Value> = (0..events / 4)
        .map(|i| json!({"toolCall": {"id": format!("c{i}"), "name": "todo", "arguments": todo}}))
        .collect();
    let script: Script = serde_json::from_value(json!({"responses": [
        {"events": calls},
        {"events": [{"text": "done"}]},
    ]}))
    .unwrap();
    let mock = MockLlm::start(script).unwrap();
    let mut client = Client::start(&mock, data_dir);
    let new = client.call("session/new", json!({"cwd": "/tmp", "mcpServers": []}));
    let session = new["result"]["sessionId"].as_str().unwrap().to_string();
    client.call(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "plan"}]}),
    );
    client.engine.close().unwrap();
    session
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (events, runs) = if quick { (10_000, 2) } else { (100_000, 5) };
    let release = spawned::release_builds();
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let config = spawned::file_store_config(scratch.path());
    let session = record(events, &scratch.path().join("data"));
    let way = |method, slow| Way { method, slow };
    let (load, resume) = (way("session/load", false), way("session/resume", false));
    let slow = way("session/load", true);
    let hearth = release.join("hearth");
    let mut builds: Vec<(String, PathBuf, Way)> = vec![
        ("`hearth acp`".into(), hearth.clone(), load),
        (
            "`hearth acp`, `session/resume`".into(),
            hearth.clone(),
            resume,
        ),
        ("`hearth acp`, a slow client".into(), hearth, slow),
    ];
    if let Some((name, base)) = spawned::base_build() {
        let program = base.join("hearth");
        builds.push((format!("`hearth acp` at {name}"), program.clone(), load));
        builds.push((
            format!("`hearth acp` at {name}, a slow client"),
            program,
            slow,
        ));
    }
    let mut loads: Vec<Vec<Load>> = builds.iter().map(|_| Vec::new()).collect();
    for round in 0..runs {
        for turn in 0..builds.len() {
            let at = (round + turn) % builds.len();
            let (_, program, way) = &builds[at];
            let load = load_once(program, &spawned::acp_args(&config), &session, *way);
            loads[at].push(load);
        }
    }
    println!(
        "| `session/load` of {events} events, spawned, file store (median of {runs}) | load → answered | frames replayed | RSS once initialized | peak RSS (VmHWM) | peak − initialized |"
    );
    println!("|---|---|---|---|---|---|");
    let mib = |kib: u64| kib as f64 / 1024.0;
    for ((name, _, _), loads) in builds.iter().zip(&loads) {
        let of = |f: &dyn Fn(&Load) -> f64| median(loads.iter().map(f).collect());
        println!(
            "| {name} | {:.1} ms | {} | {:.1} MiB | {:.1} MiB | {:.1} MiB |",
            of(&|l| l.took.as_secs_f64() * 1e3),
            loads[0].frames,
            of(&|l| mib(l.initialized_kib)),
            of(&|l| mib(l.peak_kib)),
            of(&|l| mib(l.peak_kib.saturating_sub(l.initialized_kib))),
        );
    }
}
