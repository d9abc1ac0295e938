//! `session/list` beside `initialize`, through the engine alone (a Rust `Host` that hands
//! each frame to the timing thread, and takes answers made inside `send` on it): the round trip of the first page of a file store of 20
//! sessions, and of one of 10,000 (spread over 100 working directories) without and with a
//! `cwd` filter, and of an empty file store and an empty `:memory:` one (what the file costs a
//! request that finds nothing), against that of a request answered at once. A page asked for
//! again with nothing committed since is the last answer (`acp/list_cache.rs`); the cases
//! "after a commit" first rename one of the store's sessions (`session/set_title`, untimed,
//! its answer awaited: committed), so they time the page read afresh, as a picker opened while
//! sessions stream sees it. The per-host figures (C, Node, Python, stdio) are
//! `benches/roundtrip`'s; this one isolates what the engine adds.
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

    /// Takes an answer made inside `send` on the timing thread, as the C and Python hosts
    /// do: the figures are the engine's work, not this VM's thread wake-ups (bimodal here:
    /// about 6 or 45 µs for the same request from one run to the next).
    fn deliver_here(&self, frame: &str) -> bool {
        self.deliver(frame);
        true
    }
}

/// Sends request `id` and waits for its answer, which it returns.
fn round_trip(
    engine: &Engine,
    rx: &Receiver<String>,
    id: u64,
    method: &str,
    params: &str,
) -> String {
    engine
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ))
        .unwrap();
    let wanted = format!(r#""id":{id},"#);
    loop {
        let frame = rx.recv_timeout(Duration::from_secs(10)).expect("an answer");
        if frame.contains(&wanted) {
            return frame;
        }
    }
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let at = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[at].as_secs_f64() * 1e6
}

/// An engine on a store, initialized.
struct Store {
    engine: Engine,
    rx: Receiver<String>,
    /// The id the next request takes.
    id: u64,
    /// The first session's `session/set_title` params (none in an empty store), for a commit.
    rename: Option<String>,
}

impl Store {
    /// Renames the store's first session, untimed: its answer comes once the rename is
    /// committed, so the next `session/list` reads the store afresh.
    fn commit(&mut self) {
        let rename = self.rename.as_deref().expect("a session to rename");
        self.id += 1;
        round_trip(&self.engine, &self.rx, self.id, "session/set_title", rename);
    }
}

/// An engine on a store of `sessions` sessions (`data_dir`: a directory, or `:memory:`),
/// spread over 100 working directories, initialized.
fn engine_with(sessions: usize, data_dir: &str) -> Store {
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
    let mut rename = None;
    for n in 0..sessions {
        let params = format!(r#"{{"cwd":"/tmp/w{}","mcpServers":[]}}"#, n % 100);
        let answer = round_trip(&engine, &rx, 2 + n as u64, "session/new", &params);
        if rename.is_none() {
            let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
            let session = &answer["result"]["sessionId"];
            rename = Some(format!(r#"{{"sessionId":{session},"title":"renamed"}}"#));
        }
    }
    // The writes behind the answers reach the file before the timing starts.
    std::thread::sleep(Duration::from_millis(500));
    Store {
        engine,
        rx,
        id: 2 + sessions as u64,
        rename,
    }
}

/// One kind of request timed: on which store (an index of `stores`), which method with
/// which params, and whether a commit comes before each.
struct Case {
    name: &'static str,
    store: usize,
    method: &'static str,
    params: &'static str,
    after_commit: bool,
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
            after_commit: false,
        };
    let fresh = |case: Case| Case {
        after_commit: true,
        ..case
    };
    const CWD: &str = r#"{"cwd":"/tmp/w7"}"#;
    let cases = [
        case("initialize", 0, "initialize", INIT),
        case("session/list, 20 sessions", 0, "session/list", "{}"),
        case("session/list, first 50 of {large}", 1, "session/list", "{}"),
        case(
            "session/list, first 50 of {large} with a `cwd` of 1 in 100",
            1,
            "session/list",
            CWD,
        ),
        case("session/list, empty file store", 2, "session/list", "{}"),
        case(
            "session/list, empty `:memory:` store",
            3,
            "session/list",
            "{}",
        ),
        fresh(case(
            "session/list, 20 sessions, after a commit",
            0,
            "session/list",
            "{}",
        )),
        fresh(case(
            "session/list, first 50 of {large}, after a commit",
            1,
            "session/list",
            "{}",
        )),
        fresh(case(
            "session/list, first 50 of {large} with a `cwd` of 1 in 100, after a commit",
            1,
            "session/list",
            CWD,
        )),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    // The cases take turns, round by round, so that a noisy moment hits them all.
    for _ in 0..rounds {
        for (i, case) in cases.iter().enumerate() {
            let store = &mut stores[case.store];
            for _ in 0..per_round {
                if case.after_commit {
                    store.commit();
                }
                store.id += 1;
                let started = Instant::now();
                round_trip(&store.engine, &store.rx, store.id, case.method, case.params);
                times[i].push(started.elapsed());
            }
        }
    }
    for store in &stores {
        store.engine.close().unwrap();
    }
    let n = rounds * per_round;
    println!(
        "| round trip through a Rust host, file stores ({n} each, {rounds} interleaved rounds) | median µs | p99 µs | ÷ `initialize` | ÷ 20 sessions read the same way |"
    );
    println!("|---|---|---|---|---|");
    let initialize = percentile(&mut times[0], 0.5);
    let twenty = [1, 6].map(|i| percentile(&mut times[i], 0.5));
    for (case, t) in cases.iter().zip(times.iter_mut()) {
        let median = percentile(t, 0.5);
        println!(
            "| {} | {median:.1} | {:.1} | {:.2}× | {:.2}× |",
            case.name.replace("{large}", &large.to_string()),
            percentile(t, 0.99),
            median / initialize,
            median / twenty[usize::from(case.after_commit)]
        );
    }
}
