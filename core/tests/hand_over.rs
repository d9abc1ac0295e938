//! Answers handed to the host on the thread calling `Engine::send` (`Host::deliver_here`,
//! core/src/outbox/here.rs): before `send` returns, never nested, never overlapping a frame
//! of the delivery thread, in order, each request answered once, and only what is committed.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, ThreadId};
use std::time::Duration;

use common::Setup;
use hearth_core::{Config, Engine, EngineError, Host};
use hearth_testkit::absolute;
use serde_json::{Value, json};

/// Which of the host's callbacks received a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Path {
    Here,
    Delivery,
}

struct Received {
    frame: Value,
    path: Path,
    thread: ThreadId,
}

type Reaction = Box<dyn Fn(&Value, Path) + Send + Sync>;

/// Takes every frame it is offered on the caller's thread; records each frame with the path
/// and thread it came by, and fails the test if two callbacks ever overlap.
struct Taker {
    frames: Mutex<Sender<Received>>,
    inside: AtomicUsize,
    react: Reaction,
}

impl Taker {
    fn receive(&self, frame: &str, path: Path) {
        let overlapping = self.inside.fetch_add(1, Ordering::SeqCst);
        assert_eq!(overlapping, 0, "two frames reached the host at once");
        let frame: Value = serde_json::from_str(frame).unwrap();
        (self.react)(&frame, path);
        let thread = thread::current().id();
        let _ = self.frames.lock().unwrap().send(Received {
            frame,
            path,
            thread,
        });
        self.inside.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Host for Taker {
    fn deliver(&self, frame: &str) {
        self.receive(frame, Path::Delivery);
    }

    fn deliver_here(&self, frame: &str) -> bool {
        self.receive(frame, Path::Here);
        true
    }
}

fn start(
    config: &str,
    react: impl Fn(&Value, Path) + Send + Sync + 'static,
) -> (Arc<Engine>, Receiver<Received>) {
    let (tx, rx) = mpsc::channel();
    let host = Arc::new(Taker {
        frames: Mutex::new(tx),
        inside: AtomicUsize::new(0),
        react: Box::new(react),
    });
    let engine = Engine::start(Config::from_json(config).unwrap(), host).unwrap();
    (Arc::new(engine), rx)
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn initialize(id: u64) -> String {
    request(id, "initialize", json!({"protocolVersion": 1}))
}

fn new_session(id: u64) -> String {
    request(
        id,
        "session/new",
        json!({"cwd": absolute("/tmp"), "mcpServers": []}),
    )
}

fn next(rx: &Receiver<Received>) -> Received {
    rx.recv_timeout(Duration::from_secs(20)).expect("a frame")
}

/// The frames up to and including the answer to `id`.
fn until_answer(rx: &Receiver<Received>, id: u64) -> Vec<Received> {
    let mut seen = Vec::new();
    loop {
        let received = next(rx);
        let done = received.frame["id"] == id;
        seen.push(received);
        if done {
            return seen;
        }
    }
}

#[test]
fn an_answer_made_inside_send_reaches_the_host_on_the_calling_thread_before_send_returns() {
    let setup = Setup::new(json!({"responses": []}));
    let (engine, rx) = start(&setup.config(), |_, _| {});
    for id in 1..=3 {
        engine.send(&initialize(id)).unwrap();
        let answer = rx.try_recv().expect("answered before send returned");
        assert_eq!(answer.frame["id"], id);
        assert_eq!(answer.path, Path::Here);
        assert_eq!(answer.thread, thread::current().id());
    }
    // A malformed frame's error is such an answer too.
    engine.send("{not json").unwrap();
    let answer = rx.try_recv().expect("answered before send returned");
    assert_eq!(answer.frame["error"]["code"], -32700);
    engine.close().unwrap();
}

#[test]
fn a_send_from_inside_the_hand_over_is_queued_behind_it_and_never_nested() {
    let setup = Setup::new(json!({"responses": []}));
    let slot: Arc<OnceLock<Arc<Engine>>> = Arc::new(OnceLock::new());
    let engine_slot = slot.clone();
    let (engine, rx) = start(&setup.config(), move |frame, _| {
        let id = frame["id"].as_u64().unwrap_or(0);
        // Each answer sends the next request from inside the host's callback.
        if (1..5).contains(&id) {
            let engine = engine_slot.get().unwrap();
            engine.send(&initialize(id + 1)).unwrap();
        }
    });
    slot.set(engine.clone()).ok().unwrap();
    engine.send(&initialize(1)).unwrap();
    let frames = until_answer(&rx, 5);
    let ids: Vec<_> = frames.iter().map(|r| r.frame["id"].clone()).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert_eq!(frames[0].path, Path::Here);
    assert!(
        frames[1..].iter().all(|r| r.path == Path::Delivery),
        "an answer made inside the callback waits for the delivery thread"
    );
    engine.close().unwrap();
}

/// What `include/hearth.h` promises: a send to another engine from inside a host's callback
/// is queued there too. Handed over on the spot, the other engine's callback would run nested
/// inside this one, and a host sharing one lock between its engines would wait for itself.
#[test]
fn a_send_to_another_engine_from_inside_a_callback_is_queued_there_never_nested() {
    let (setup, other_setup) = (
        Setup::new(json!({"responses": []})),
        Setup::new(json!({"responses": []})),
    );
    let (other, other_rx) = start(&other_setup.config(), |_, _| {});
    let other_for_host = other.clone();
    let slot: Arc<OnceLock<Arc<Engine>>> = Arc::new(OnceLock::new());
    let engine_slot = slot.clone();
    let (engine, rx) = start(&setup.config(), move |frame, path| {
        // From inside a hand-over on this thread, then from inside the delivery thread's
        // callback (the answer to the request queued from the first).
        match (frame["id"].as_u64(), path) {
            (Some(1), Path::Here) => {
                other_for_host.send(&initialize(1)).unwrap();
                engine_slot.get().unwrap().send(&initialize(2)).unwrap();
            }
            (Some(2), Path::Delivery) => other_for_host.send(&initialize(2)).unwrap(),
            _ => {}
        }
    });
    slot.set(engine.clone()).ok().unwrap();
    engine.send(&initialize(1)).unwrap();
    assert_eq!(until_answer(&rx, 2).len(), 2);
    let answers = until_answer(&other_rx, 2);
    assert_eq!(answers.len(), 2);
    assert!(
        answers.iter().all(|a| a.path == Path::Delivery),
        "the other engine's answers are delivered by its own thread"
    );
    engine.close().unwrap();
    other.close().unwrap();
}

#[test]
fn close_from_inside_the_hand_over_is_an_error_and_the_engine_goes_on() {
    let setup = Setup::new(json!({"responses": []}));
    let slot: Arc<OnceLock<Arc<Engine>>> = Arc::new(OnceLock::new());
    let closed: Arc<Mutex<Option<Result<(), EngineError>>>> = Arc::default();
    let (engine_slot, result) = (slot.clone(), closed.clone());
    let (engine, rx) = start(&setup.config(), move |frame, path| {
        if frame["id"] == 1 && path == Path::Here {
            *result.lock().unwrap() = Some(engine_slot.get().unwrap().close());
        }
    });
    slot.set(engine.clone()).ok().unwrap();
    engine.send(&initialize(1)).unwrap();
    assert_eq!(
        *closed.lock().unwrap(),
        Some(Err(EngineError::CloseFromDeliver))
    );
    engine.send(&initialize(2)).unwrap();
    assert_eq!(next(&rx).frame["id"], 1);
    assert_eq!(next(&rx).frame["id"], 2);
    engine.close().unwrap();
}

/// A prompt streams many chunks; meanwhile the client sends requests the engine answers at
/// once. Whichever way each answer comes, the host sees one frame at a time, every request is
/// answered exactly once, the session's chunks arrive complete and in order, and the prompt's
/// answer follows all of them.
#[test]
fn answers_made_inside_send_keep_the_order_of_a_streaming_session() {
    let words: Vec<String> = (0..400).map(|i| format!("w{i} ")).collect();
    let events: Vec<Value> = words.iter().map(|w| json!({"text": w})).collect();
    let setup = Setup::new(json!({"responses": [{"events": events}]}));
    let (engine, rx) = start(&setup.config(), |_, _| {});
    engine.send(&initialize(1)).unwrap();
    engine.send(&new_session(2)).unwrap();
    let session = until_answer(&rx, 2).pop().unwrap().frame["result"]["sessionId"].clone();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]});
    engine.send(&request(3, "session/prompt", prompt)).unwrap();
    let mut frames = Vec::new();
    let mut id = 100;
    // Requests go out one after the other, each once the previous answer is in, until the
    // prompt is answered: they race the stream's frames on the delivery thread.
    let prompt_answered = |frames: &[Received]| frames.iter().any(|r| r.frame["id"] == 3);
    while !prompt_answered(&frames) {
        id += 1;
        engine
            .send(&request(id, "session/list", json!({})))
            .unwrap();
        frames.extend(until_answer(&rx, id));
    }
    let answers: Vec<u64> = frames
        .iter()
        .filter(|r| r.frame["result"].is_object() || r.frame["error"].is_object())
        .filter_map(|r| r.frame["id"].as_u64())
        .collect();
    let mut expected: Vec<u64> = (101..=id).collect();
    expected.push(3);
    let mut sorted = answers.clone();
    sorted.sort_unstable();
    expected.sort_unstable();
    assert_eq!(sorted, expected, "each request answered exactly once");
    let text: String = frames
        .iter()
        .filter(|r| r.frame["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|r| {
            r.frame["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(text, words.concat(), "every chunk, in order");
    let last_chunk = frames
        .iter()
        .rposition(|r| r.frame["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .unwrap();
    let prompt_answer = frames.iter().position(|r| r.frame["id"] == 3).unwrap();
    assert!(
        prompt_answer > last_chunk,
        "the prompt's answer follows its updates"
    );
    engine.close().unwrap();
}

/// Whatever a client was told is committed: a session it saw created is in the list the very
/// next request answers, even when that answer is handed over inside `send`.
#[test]
fn an_answer_made_inside_send_sees_every_write_the_host_was_told_of() {
    let setup = Setup::new(json!({"responses": []}));
    let (engine, rx) = start(&setup.config(), |_, _| {});
    engine.send(&initialize(1)).unwrap();
    until_answer(&rx, 1);
    for round in 0..20u64 {
        let id = 10 + 2 * round;
        engine.send(&new_session(id)).unwrap();
        let created = until_answer(&rx, id).pop().unwrap().frame["result"]["sessionId"].clone();
        engine
            .send(&request(id + 1, "session/list", json!({})))
            .unwrap();
        let listed = until_answer(&rx, id + 1).pop().unwrap().frame;
        let sessions = listed["result"]["sessions"].as_array().unwrap();
        assert!(
            sessions.iter().any(|s| s["sessionId"] == created),
            "round {round}: the listed sessions miss {created}"
        );
    }
    engine.close().unwrap();
}
