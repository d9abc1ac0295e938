//! The reference row of the frame-throughput harness (benches/throughput): the engine's own
//! `Host` trait, implemented in Rust with nothing behind `deliver` but the check and count
//! every driver does. No C, no N-API, no GIL: what the engine delivers when the host costs
//! (almost) nothing, so that each binding's row can be read against it.
//!
//!   replay_reference CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE
//!
//! Same command line, protocol and result line (`FRAMES ELAPSED_NS DELIVERY_CPU_NS
//! MAIN_CPU_NS`) as the other drivers (see the harness's README.md). It lives here, as an example of the C ABI's crate, only because this crate
//! already depends on `hearth-core` and is built in release by the harness; it uses no C.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use hearth_core::{Config, Engine, Host};

const UPDATE: &str = r#"{"jsonrpc":"2.0","method":"session/update","#;

/// Counts `session/update` frames; records when each response arrives.
#[derive(Default)]
struct Counter {
    updates: AtomicU64,
    /// Drained mode: the first frame's delivery sleeps this long (the engine queues the rest
    /// of the replay meanwhile), then records when it woke.
    pause: Duration,
    resumed: Mutex<Option<Instant>>,
    /// The id of the last response and when it arrived.
    answered: Mutex<Option<(u64, Instant)>>,
    answered_cond: Condvar,
}

impl Host for Counter {
    fn deliver(&self, frame: &str) {
        if frame.starts_with(UPDATE) {
            // Only this thread writes; the main thread reads after the response's mutex.
            if self.updates.fetch_add(1, Ordering::Relaxed) == 0 && !self.pause.is_zero() {
                std::thread::sleep(self.pause);
                *self.resumed.lock().unwrap() = Some(Instant::now());
            }
            return;
        }
        let Some(id) = response_id(frame) else {
            eprintln!("replay_reference: unexpected frame: {frame}");
            std::process::exit(1);
        };
        let arrived = Instant::now();
        *self.answered.lock().unwrap() = Some((id, arrived));
        self.answered_cond.notify_one();
    }
}

impl Counter {
    fn wait_for(&self, id: u64) -> Instant {
        let answered = self.answered.lock().unwrap();
        let answered = self
            .answered_cond
            .wait_while(answered, |a| !matches!(a, Some((got, _)) if *got == id))
            .unwrap();
        answered.expect("checked by wait_while").1
    }
}

/// The id of a successful response: the same prefix check as benches/common.h.
fn response_id(frame: &str) -> Option<u64> {
    let rest = frame.strip_prefix(r#"{"jsonrpc":"2.0","id":"#)?;
    let digits = rest.find(|c: char| !c.is_ascii_digit())?;
    rest[digits..].starts_with(r#","result":"#).then_some(())?;
    rest[..digits].parse().ok()
}

/// On-CPU nanoseconds so far of the engine's delivery thread and of the main thread, from
/// the kernel's per-thread accounting (/proc/self/task/TID/schedstat).
fn thread_cpu() -> (u64, u64) {
    let main = std::process::id().to_string();
    let (mut delivery, mut main_ns) = (0, 0);
    for task in std::fs::read_dir("/proc/self/task").expect("/proc/self/task") {
        let path = task.expect("a task").path();
        let read = |name| std::fs::read_to_string(path.join(name)).unwrap_or_default();
        let ns: u64 = read("schedstat")
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if path.file_name() == Some(main.as_ref()) {
            main_ns += ns;
        } else if read("comm").trim_end() == "hearth-delivery" {
            delivery += ns;
        }
    }
    (delivery, main_ns)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, config_path, session, pause_ms, result_path] = &args[..] else {
        eprintln!("usage: replay_reference CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE");
        std::process::exit(2);
    };
    let config = std::fs::read_to_string(config_path).expect("the config file");
    let counter = Arc::new(Counter {
        pause: Duration::from_millis(pause_ms.parse().expect("PAUSE_MS: a number")),
        ..Counter::default()
    });
    let engine = Engine::start(
        Config::from_json(&config).expect("a valid config"),
        counter.clone(),
    )
    .expect("the engine starts");

    engine
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#)
        .unwrap();
    counter.wait_for(1);
    let load = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"session/load","params":{{"sessionId":"{session}","cwd":"/tmp","mcpServers":[]}}}}"#
    );
    let (delivery_before, main_before) = thread_cpu();
    let started = Instant::now();
    engine.send(&load).unwrap();
    let answered = counter.wait_for(2);
    let (delivery_after, main_after) = thread_cpu();
    let elapsed = answered - counter.resumed.lock().unwrap().unwrap_or(started);
    let updates = counter.updates.load(Ordering::Relaxed);
    let result = format!(
        "{updates} {} {} {}\n",
        elapsed.as_nanos(),
        delivery_after - delivery_before,
        main_after - main_before
    );
    std::fs::write(result_path, result).expect("the result file");
    engine.close().unwrap();
}
