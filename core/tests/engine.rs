//! The engine contract: threads, re-entrancy, close, a misbehaving host, and a store that
//! can't be opened.

mod common;

use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::Setup;
use hearth_core::{Config, Engine, EngineError, Host, HostPorts};
use hearth_testkit::absolute;
use serde_json::{Value, json};

/// A host that records frames and can run a reaction on the delivery thread.
struct Recorder {
    frames: Mutex<Sender<Value>>,
    react: Box<dyn Fn(&Value) + Send + Sync>,
}

impl Host for Recorder {
    fn deliver(&self, frame: &str) {
        let value: Value = serde_json::from_str(frame).unwrap();
        (self.react)(&value);
        let _ = self.frames.lock().unwrap().send(value);
    }
}

fn start(
    config: &str,
    react: impl Fn(&Value) + Send + Sync + 'static,
) -> (Arc<Engine>, mpsc::Receiver<Value>) {
    let (tx, rx) = mpsc::channel();
    let host = Arc::new(Recorder {
        frames: Mutex::new(tx),
        react: Box::new(react),
    });
    let engine = Engine::start(Config::from_json(config).unwrap(), host).unwrap();
    (Arc::new(engine), rx)
}

fn frame(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn next(rx: &mpsc::Receiver<Value>) -> Value {
    rx.recv_timeout(Duration::from_secs(10)).expect("a frame")
}

#[test]
fn send_from_inside_deliver_works_and_close_from_inside_is_an_error() {
    let setup = Setup::new(json!({"responses": []}));
    let engine_slot: Arc<OnceLock<Arc<Engine>>> = Arc::new(OnceLock::new());
    let close_result: Arc<Mutex<Option<Result<(), EngineError>>>> = Arc::default();
    let (slot, result) = (engine_slot.clone(), close_result.clone());
    let (engine, rx) = start(&setup.config(), move |frame| {
        let engine = slot.get().unwrap();
        if frame["id"] == 1 {
            // Re-entrant: the host answers the initialize response with a new request.
            engine
                .send(&frame_str(
                    2,
                    "session/new",
                    json!({"cwd": absolute("/tmp"), "mcpServers": []}),
                ))
                .unwrap();
        }
        if frame["id"] == 2 {
            *result.lock().unwrap() = Some(engine.close());
        }
    });
    engine_slot.set(engine.clone()).ok().unwrap();
    engine
        .send(&frame(1, "initialize", json!({"protocolVersion": 1})))
        .unwrap();
    assert_eq!(next(&rx)["result"]["protocolVersion"], 1);
    assert!(next(&rx)["result"]["sessionId"].is_string());
    assert_eq!(
        *close_result.lock().unwrap(),
        Some(Err(EngineError::CloseFromDeliver))
    );
    // The engine is still fine after the refused close.
    engine.send(&frame(3, "session/list", json!({}))).unwrap();
    // The new session's command list may come first.
    let answer = std::iter::repeat_with(|| next(&rx))
        .find(|f| f.get("id").is_some())
        .unwrap();
    assert_eq!(answer["id"], 3);
    engine.close().unwrap();
}

fn frame_str(id: u64, method: &str, params: Value) -> String {
    frame(id, method, params)
}

#[test]
fn close_is_idempotent_and_send_after_close_is_refused() {
    let setup = Setup::new(json!({"responses": []}));
    let (engine, _rx) = start(&setup.config(), |_| {});
    engine.close().unwrap();
    engine.close().unwrap();
    assert_eq!(engine.send("{}"), Err(EngineError::Closed));
    assert_eq!(engine.send_bytes(b"{}"), Err(EngineError::Closed));
}

#[test]
fn close_answers_a_running_prompt_and_stops_delivering() {
    let setup = Setup::new(json!({"responses": [{"events": [{"text": "x"}, {"stallMs": 30000}]}]}));
    let (engine, rx) = start(&setup.config(), |_| {});
    engine
        .send(&frame(1, "initialize", json!({"protocolVersion": 1})))
        .unwrap();
    engine
        .send(&frame(
            2,
            "session/new",
            json!({"cwd": absolute("/tmp"), "mcpServers": []}),
        ))
        .unwrap();
    next(&rx);
    let session = next(&rx)["result"]["sessionId"].clone();
    engine
        .send(&frame(
            3,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
        ))
        .unwrap();
    while next(&rx)["method"] != "session/update" {}
    let started = std::time::Instant::now();
    engine.close().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "close does not wait for the stalled model"
    );
    let rest: Vec<Value> = rx.try_iter().collect();
    let answer = rest
        .iter()
        .find(|f| f["id"] == 3)
        .expect("the prompt was answered before close returned");
    assert_eq!(answer["result"]["stopReason"], "cancelled");
}

#[test]
fn a_panicking_host_does_not_stop_the_engine() {
    let setup = Setup::new(json!({"responses": []}));
    let (engine, rx) = start(&setup.config(), |frame| {
        if frame["id"] == 1 {
            panic!("host bug");
        }
    });
    engine
        .send(&frame(1, "initialize", json!({"protocolVersion": 1})))
        .unwrap();
    engine.send(&frame(2, "session/list", json!({}))).unwrap();
    assert_eq!(
        next(&rx)["id"],
        2,
        "the frame whose delivery panicked is lost, the next one arrives"
    );
    engine.close().unwrap();
}

#[test]
fn a_corrupt_database_is_a_clear_error_and_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hearth.db");
    let garbage = b"this is not a sqlite database, it is a grocery list: eggs, milk".repeat(100);
    std::fs::write(&db, &garbage).unwrap();
    let config = json!({"dataDir": dir.path()}).to_string();
    let error = Engine::start(Config::from_json(&config).unwrap(), Arc::new(Null))
        .err()
        .expect("refused");
    match &error {
        EngineError::Store(message) => assert!(
            message.contains("hearth.db") && message.contains("not a database"),
            "{message}"
        ),
        other => panic!("expected a store error, got {other:?}"),
    }
    assert_eq!(std::fs::read(&db).unwrap(), garbage, "nothing overwritten");
}

#[test]
fn a_bad_config_names_the_key() {
    let error = Config::from_json(r#"{"dataDir": ":memory:", "workers": 4}"#).unwrap_err();
    assert!(error.to_string().contains("workers"), "{error}");
}

struct Null;

impl Host for Null {
    fn deliver(&self, _frame: &str) {}
}

/// Records whether the host was dropped, which happens when the delivery thread ends.
struct DropFlag {
    frames: Mutex<Sender<Value>>,
    dropped: Arc<std::sync::atomic::AtomicBool>,
}

impl Host for DropFlag {
    fn deliver(&self, frame: &str) {
        let _ = self
            .frames
            .lock()
            .unwrap()
            .send(serde_json::from_str(frame).unwrap());
    }
}

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.dropped
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

fn with_stalled_prompt(engine: &Engine, rx: &mpsc::Receiver<Value>) {
    engine
        .send(&frame(1, "initialize", json!({"protocolVersion": 1})))
        .unwrap();
    engine
        .send(&frame(
            2,
            "session/new",
            json!({"cwd": absolute("/tmp"), "mcpServers": []}),
        ))
        .unwrap();
    let session = loop {
        let f = next(rx);
        if f["id"] == 2 {
            break f["result"]["sessionId"].clone();
        }
    };
    engine
        .send(&frame(
            3,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
        ))
        .unwrap();
    while next(rx)["method"] != "session/update" {}
}

#[test]
fn concurrent_closes_both_wait_for_the_threads() {
    let setup = Setup::new(json!({"responses": [{"events": [{"text": "x"}, {"stallMs": 30000}]}]}));
    let (tx, rx) = mpsc::channel();
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let host = Arc::new(DropFlag {
        frames: Mutex::new(tx),
        dropped: dropped.clone(),
    });
    let engine =
        Arc::new(Engine::start(Config::from_json(&setup.config()).unwrap(), host).unwrap());
    with_stalled_prompt(&engine, &rx);
    let closers: Vec<_> = (0..3)
        .map(|_| {
            let (engine, dropped) = (engine.clone(), dropped.clone());
            std::thread::spawn(move || {
                engine.close().unwrap();
                dropped.load(std::sync::atomic::Ordering::SeqCst)
            })
        })
        .collect();
    for closer in closers {
        assert!(
            closer.join().unwrap(),
            "close returned before the delivery thread ended"
        );
    }
}

#[test]
fn an_engine_dropped_inside_deliver_still_closes_cleanly() {
    let setup = Setup::new(json!({"responses": [{"events": [{"text": "x"}, {"stallMs": 30000}]}]}));
    let slot: Arc<Mutex<Option<Engine>>> = Arc::default();
    let holder = slot.clone();
    let (engine, rx) = {
        let (tx, rx) = mpsc::channel();
        let host = Arc::new(Recorder {
            frames: Mutex::new(tx),
            react: Box::new(move |frame: &Value| {
                if frame["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
                    drop(holder.lock().unwrap().take()); // the host lets go of the engine here
                }
            }),
        });
        (
            Engine::start(Config::from_json(&setup.config()).unwrap(), host).unwrap(),
            rx,
        )
    };
    engine
        .send(&frame(1, "initialize", json!({"protocolVersion": 1})))
        .unwrap();
    engine
        .send(&frame(
            2,
            "session/new",
            json!({"cwd": absolute("/tmp"), "mcpServers": []}),
        ))
        .unwrap();
    next(&rx);
    let session = next(&rx)["result"]["sessionId"].clone();
    engine
        .send(&frame(
            3,
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}),
        ))
        .unwrap();
    *slot.lock().unwrap() = Some(engine);
    let answer = loop {
        let f = next(&rx);
        if f["id"] == 3 {
            break f;
        }
    };
    assert_eq!(
        answer["result"]["stopReason"], "cancelled",
        "the turn in flight is answered, not torn down"
    );
}

#[test]
fn close_releases_the_database_file() {
    let setup = Setup::new(json!({"responses": []}));
    let (engine, _rx) = start(&setup.config(), |_| {});
    engine
        .send(&frame(1, "initialize", json!({"protocolVersion": 1})))
        .unwrap();
    engine.close().unwrap();
    // Leaving WAL mode needs the only connection: it fails while the engine holds one.
    let db = rusqlite::Connection::open(setup.dir.path().join("hearth.db")).unwrap();
    let mode: String = db
        .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    drop(engine);
}

/// Takes frames on the caller's thread (`Host::deliver_here`) or declines them, and records
/// which way each came.
struct Offered {
    frames: Mutex<Sender<(Value, bool)>>,
    take_here: bool,
}

impl Offered {
    fn record(&self, frame: &str, here: bool) {
        let frame = serde_json::from_str(frame).unwrap();
        let _ = self.frames.lock().unwrap().send((frame, here));
    }
}

impl Host for Offered {
    fn deliver(&self, frame: &str) {
        self.record(frame, false);
    }

    fn deliver_here(&self, frame: &str) -> bool {
        if self.take_here {
            self.record(frame, true);
        }
        self.take_here
    }
}

fn prepare(dir: &std::path::Path, take_here: bool) -> (Engine, mpsc::Receiver<(Value, bool)>) {
    let (tx, rx) = mpsc::channel();
    let host = Arc::new(Offered {
        frames: Mutex::new(tx),
        take_here,
    });
    let config = Config::from_json(&json!({"dataDir": dir}).to_string()).unwrap();
    let engine = Engine::prepare_with(config, host, HostPorts::default()).unwrap();
    (engine, rx)
}

/// What `hearth acp`'s cold start rests on: a prepared engine answers `initialize` with no
/// store, runtime or delivery thread, and the first frame after it starts them.
#[test]
fn a_prepared_engine_answers_initialize_first_and_starts_at_the_next_frame() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hearth.db");
    let (engine, rx) = prepare(dir.path(), true);
    let init = json!({"protocolVersion": 1});
    engine.send(&frame(1, "initialize", init)).unwrap();
    let (answer, here) = rx.try_recv().expect("answered inside send");
    assert!(here && answer["result"]["protocolVersion"] == 1, "{answer}");
    assert!(!db.exists(), "the store is not opened for it");

    engine.send(&frame(2, "session/list", json!({}))).unwrap();
    let (answer, _) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(answer["id"], 2);
    assert!(answer["result"]["sessions"].is_array(), "{answer}");
    assert!(db.exists(), "started by the frame after `initialize`");
    engine.close().unwrap();
}

/// A host that declines the hand-over gets the first answer from the delivery thread, once
/// `ready` has started it; before, nothing could deliver it.
#[test]
fn a_declined_first_answer_is_delivered_once_the_engine_is_ready() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, rx) = prepare(dir.path(), false);
    engine
        .send(&frame(1, "initialize", json!({"protocolVersion": 1})))
        .unwrap();
    assert!(rx.try_recv().is_err(), "no thread to deliver it yet");
    engine.ready().unwrap();
    let (answer, here) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(!here && answer["id"] == 1, "{answer}");
    engine.ready().unwrap();
    engine.close().unwrap();
}

/// A prepared engine closes without ever starting, and starts nothing after.
#[test]
fn a_prepared_engine_closes_without_starting() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _rx) = prepare(dir.path(), true);
    engine.close().unwrap();
    assert_eq!(engine.ready(), Err(EngineError::Closed));
    let sent = engine.send(&frame(1, "initialize", json!({"protocolVersion": 1})));
    assert_eq!(sent, Err(EngineError::Closed));
    assert!(!dir.path().join("hearth.db").exists(), "nothing opened");
}

/// The store's error reaches the host from `ready`, or from the `send` that needed it, each
/// time it is tried, and the file is left as it was.
#[test]
fn a_prepared_engines_corrupt_store_fails_ready_and_the_frames_that_need_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hearth.db");
    std::fs::write(&db, b"not a database").unwrap();
    let (engine, rx) = prepare(dir.path(), true);
    engine
        .send(&frame(1, "initialize", json!({"protocolVersion": 1})))
        .unwrap();
    assert_eq!(rx.try_recv().unwrap().0["id"], 1);
    assert!(matches!(engine.ready(), Err(EngineError::Store(_))));
    let sent = engine.send(&frame(2, "session/list", json!({})));
    assert!(matches!(sent, Err(EngineError::Store(m)) if m.contains("hearth.db")));
    assert_eq!(std::fs::read(&db).unwrap(), b"not a database");
    engine.close().unwrap();
}
