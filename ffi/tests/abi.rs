//! The C ABI called the way a C host calls it, from Rust through the rlib: the full session
//! against the scripted mock LLM, and every misuse the header promises to survive.
//! tests/c/ runs the same checks from real C, against libhearth.so and libhearth.a.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use hearth::*;
use hearth_mock_llm::{MockLlm, Script};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// For engines that never reach a model: a closed local port, and the key session/new needs.
const NO_MODEL_CONFIG: &str = r#"{"dataDir":":memory:","providers":{"openai":{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"unused"}}}"#;

/// What on_frame does besides recording the frame.
#[derive(Clone, Copy)]
enum Reaction {
    Record,
    /// hearth_engine_send this frame from inside the first on_frame.
    SendOnFirstFrame(&'static str),
    /// hearth_engine_free the engine from inside the first on_frame.
    FreeOnFirstFrame,
    /// Once `closing` is set, hearth_engine_send from every on_frame.
    SendWhileClosing,
}

/// The host object behind user_data.
struct Recorder {
    frames: Mutex<Vec<String>>,
    arrived: Condvar,
    reaction: Reaction,
    engine: AtomicPtr<Engine>,
    /// (status, hearth_last_error()) of each call a reaction made; no status for
    /// hearth_engine_free, which returns void.
    reaction_calls: Mutex<Vec<(Option<c_int>, Option<String>)>>,
    closing: AtomicBool,
    released: AtomicUsize,
    frames_after_release: AtomicUsize,
}

impl Recorder {
    fn new(reaction: Reaction) -> Arc<Recorder> {
        Arc::new(Recorder {
            frames: Mutex::default(),
            arrived: Condvar::new(),
            reaction,
            engine: AtomicPtr::default(),
            reaction_calls: Mutex::default(),
            closing: AtomicBool::new(false),
            released: AtomicUsize::new(0),
            frames_after_release: AtomicUsize::new(0),
        })
    }

    /// Waits for the response to request `id`; returns it and the frames before it.
    fn response(&self, id: u64) -> (Value, Vec<Value>) {
        let deadline = Instant::now() + WAIT;
        let mut frames = self.frames.lock().unwrap();
        loop {
            let parsed: Vec<Value> = frames
                .iter()
                .map(|f| serde_json::from_str(f).unwrap())
                .collect();
            if let Some(at) = parsed
                .iter()
                .position(|f| f["id"] == id && f.get("method").is_none())
            {
                return (parsed[at].clone(), parsed[..at].to_vec());
            }
            let left = deadline
                .checked_duration_since(Instant::now())
                .unwrap_or_else(|| {
                    panic!("no response to request {id}; frames so far: {frames:#?}");
                });
            frames = self.arrived.wait_timeout(frames, left).unwrap().0;
        }
    }

    fn react(&self, first_frame: bool) {
        let engine = self.engine.load(Ordering::Acquire);
        let call = match self.reaction {
            Reaction::SendOnFirstFrame(frame) if first_frame => Some(send(engine, frame)),
            Reaction::FreeOnFirstFrame if first_frame => {
                free(engine);
                None
            }
            Reaction::SendWhileClosing if self.closing.load(Ordering::Acquire) => Some(send(
                engine,
                &request(99, "initialize", json!({"protocolVersion": 1})),
            )),
            _ => return,
        };
        self.reaction_calls
            .lock()
            .unwrap()
            .push((call, last_error()));
    }
}

unsafe extern "C" fn on_frame(user_data: *mut c_void, frame: *const c_char, len: usize) {
    // SAFETY: user_data is the Recorder handed to hearth_engine_new, alive until release.
    let recorder = unsafe { &*(user_data as *const Recorder) };
    // SAFETY: the library passes `len` bytes of UTF-8 followed by a NUL, valid for this call.
    let terminated = unsafe { CStr::from_ptr(frame) }.to_str().unwrap();
    assert_eq!(
        terminated.len(),
        len,
        "the frame is NUL-terminated right after `len` bytes"
    );
    if recorder.released.load(Ordering::Acquire) > 0 {
        recorder.frames_after_release.fetch_add(1, Ordering::AcqRel);
    }
    let first_frame = {
        let mut frames = recorder.frames.lock().unwrap();
        frames.push(terminated.to_owned());
        frames.len() == 1
    };
    recorder.react(first_frame);
    recorder.arrived.notify_all();
}

unsafe extern "C" fn release(user_data: *mut c_void) {
    // SAFETY: user_data came from Arc::into_raw in `start`; the library calls this once.
    let recorder = unsafe { Arc::from_raw(user_data as *const Recorder) };
    recorder.released.fetch_add(1, Ordering::AcqRel);
}

/// hearth_engine_new with `recorder` as user_data: the status and the engine.
fn start(config: &[u8], recorder: &Arc<Recorder>) -> (c_int, *mut Engine) {
    let mut engine = ptr::null_mut();
    let user_data = Arc::into_raw(recorder.clone()) as *mut c_void;
    // SAFETY: valid config bytes and out pointer; user_data's ownership passes to the library.
    let status = unsafe {
        hearth_engine_new(
            config.as_ptr().cast(),
            config.len(),
            Some(on_frame),
            user_data,
            Some(release),
            &mut engine,
        )
    };
    recorder.engine.store(engine, Ordering::Release);
    (status, engine)
}

fn send(engine: *mut Engine, frame: &str) -> c_int {
    // SAFETY: callers pass a live engine (or NULL) and a valid frame.
    unsafe { hearth_engine_send(engine, frame.as_ptr().cast(), frame.len()) }
}

fn free(engine: *mut Engine) {
    // SAFETY: callers pass NULL or a live engine from hearth_engine_new, freed once (the
    // call from inside on_frame is refused and leaves the engine live).
    unsafe { hearth_engine_free(engine) }
}

fn last_error() -> Option<String> {
    let message = hearth_last_error();
    // SAFETY: a non-NULL last error is a NUL-terminated string valid until the next call.
    (!message.is_null()).then(|| {
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    })
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn model_config(mock: &MockLlm) -> String {
    json!({"dataDir": ":memory:", "model": "mock-model",
           "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "test-key"}}})
    .to_string()
}

/// initialize + session/new as requests 1 and 2; returns the session id.
fn open_session(engine: *mut Engine, recorder: &Recorder) -> String {
    assert_eq!(
        send(
            engine,
            &request(1, "initialize", json!({"protocolVersion": 1}))
        ),
        HEARTH_OK
    );
    assert_eq!(recorder.response(1).0["result"]["protocolVersion"], 1);
    assert_eq!(
        send(
            engine,
            &request(2, "session/new", json!({"cwd": "/tmp", "mcpServers": []}))
        ),
        HEARTH_OK
    );
    recorder.response(2).0["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn prompt(engine: *mut Engine, session_id: &str, text: &str) -> c_int {
    let params = json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]});
    send(engine, &request(3, "session/prompt", params))
}

fn script(json: Value) -> Script {
    serde_json::from_value(json).unwrap()
}

/// hearth_engine_new that must fail: checks user_data was freed once and *out nulled.
fn start_failing(config: &[u8]) -> c_int {
    let recorder = Recorder::new(Reaction::Record);
    let (status, engine) = start(config, &recorder);
    assert!(engine.is_null());
    assert_eq!(
        recorder.released.load(Ordering::Acquire),
        1,
        "free_user_data runs once on failure"
    );
    status
}

#[test]
fn a_full_session_streams_the_model_answer() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"events": [{"text": "Hello"}, {"text": " world"}], "finish": "stop"}
    ]})))
    .unwrap();
    let recorder = Recorder::new(Reaction::Record);
    let (status, engine) = start(model_config(&mock).as_bytes(), &recorder);
    assert_eq!(status, HEARTH_OK, "{:?}", last_error());
    assert_eq!(last_error(), None);

    let session_id = open_session(engine, &recorder);
    assert_eq!(prompt(engine, &session_id, "Say hello."), HEARTH_OK);
    let (answer, before) = recorder.response(3);
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    let streamed: String = before
        .iter()
        .filter(|f| f["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|f| f["params"]["update"]["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, "Hello world");

    assert_eq!(recorder.released.load(Ordering::Acquire), 0);
    free(engine);
    assert_eq!(recorder.released.load(Ordering::Acquire), 1);
    assert_eq!(recorder.frames_after_release.load(Ordering::Acquire), 0);
}

#[test]
fn null_arguments_are_refused_and_named() {
    let recorder = Recorder::new(Reaction::Record);
    let user_data = Arc::into_raw(recorder.clone()) as *mut c_void;
    let config = NO_MODEL_CONFIG.as_bytes();
    // SAFETY: a NULL `out` is what is being tested; user_data's ownership passes on.
    let status = unsafe {
        hearth_engine_new(
            config.as_ptr().cast(),
            config.len(),
            Some(on_frame),
            user_data,
            Some(release),
            ptr::null_mut(),
        )
    };
    assert_eq!(status, HEARTH_NULL_ARGUMENT);
    assert!(last_error().unwrap().contains("out"));
    assert_eq!(recorder.released.load(Ordering::Acquire), 1);

    let mut engine = ptr::null_mut();
    // SAFETY: a NULL on_frame and a NULL config are what is being tested.
    let status = unsafe {
        hearth_engine_new(
            config.as_ptr().cast(),
            config.len(),
            None,
            ptr::null_mut(),
            None,
            &mut engine,
        )
    };
    assert_eq!((status, engine), (HEARTH_NULL_ARGUMENT, ptr::null_mut()));
    assert!(last_error().unwrap().contains("on_frame"));
    // SAFETY: as above.
    let status = unsafe {
        hearth_engine_new(
            ptr::null(),
            0,
            Some(on_frame),
            ptr::null_mut(),
            None,
            &mut engine,
        )
    };
    assert_eq!(status, HEARTH_NULL_ARGUMENT);
    assert!(last_error().unwrap().contains("config_json"));

    assert_eq!(send(ptr::null_mut(), "{}"), HEARTH_NULL_ARGUMENT);
    assert!(last_error().unwrap().contains("engine"));
    let recorder = Recorder::new(Reaction::Record);
    let (_, engine) = start(config, &recorder);
    // SAFETY: a NULL frame is what is being tested.
    assert_eq!(
        unsafe { hearth_engine_send(engine, ptr::null(), 0) },
        HEARTH_NULL_ARGUMENT
    );
    assert!(last_error().unwrap().contains("frame"));
    free(engine);
    free(ptr::null_mut());
    assert_eq!(last_error(), None);
}

#[test]
fn invalid_utf8_is_refused_and_nothing_is_sent() {
    assert_eq!(
        start_failing(b"{\"model\":\"caf\xe9\"}"),
        HEARTH_INVALID_UTF8
    );
    assert!(last_error().unwrap().contains("UTF-8"));

    let recorder = Recorder::new(Reaction::Record);
    let (_, engine) = start(NO_MODEL_CONFIG.as_bytes(), &recorder);
    let broken = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\xc3\x28\"}";
    // SAFETY: a live engine and `broken.len()` readable bytes.
    assert_eq!(
        unsafe { hearth_engine_send(engine, broken.as_ptr().cast(), broken.len()) },
        HEARTH_INVALID_UTF8
    );
    assert_eq!(
        send(
            engine,
            &request(2, "initialize", json!({"protocolVersion": 1}))
        ),
        HEARTH_OK
    );
    let (_, before) = recorder.response(2);
    assert!(before.is_empty(), "the invalid frame produced {before:?}");
    free(engine);
}

#[test]
fn config_errors_name_the_key() {
    assert_eq!(start_failing(br#"{"workerThreads":0}"#), HEARTH_BAD_CONFIG);
    assert!(last_error().unwrap().contains("workerThreads"));
    assert_eq!(
        start_failing(br#"{"providers":{"openai":{"baseURL":"x"}}}"#),
        HEARTH_BAD_CONFIG
    );
    assert!(last_error().unwrap().contains("baseURL"));
}

#[test]
fn a_store_that_is_not_a_database_is_a_store_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hearth.db"),
        "not an SQLite database, but long enough for a header",
    )
    .unwrap();
    let config = json!({"dataDir": dir.path()}).to_string();
    assert_eq!(start_failing(config.as_bytes()), HEARTH_STORE_ERROR);
    assert!(last_error().unwrap().contains("hearth.db"));
}

#[test]
fn on_frame_can_send_reentrantly() {
    let session_new = r#"{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}"#;
    let recorder = Recorder::new(Reaction::SendOnFirstFrame(session_new));
    let (_, engine) = start(NO_MODEL_CONFIG.as_bytes(), &recorder);
    assert_eq!(
        send(
            engine,
            &request(1, "initialize", json!({"protocolVersion": 1}))
        ),
        HEARTH_OK
    );
    assert!(recorder.response(2).0["result"]["sessionId"].is_string());
    assert_eq!(
        recorder.reaction_calls.lock().unwrap()[0],
        (Some(HEARTH_OK), None)
    );
    free(engine);
}

#[test]
fn free_from_on_frame_is_refused_without_deadlock() {
    let recorder = Recorder::new(Reaction::FreeOnFirstFrame);
    let (_, engine) = start(NO_MODEL_CONFIG.as_bytes(), &recorder);
    assert_eq!(
        send(
            engine,
            &request(1, "initialize", json!({"protocolVersion": 1}))
        ),
        HEARTH_OK
    );
    recorder.response(1);
    // The engine still serves: the refused free neither blocked nor freed anything.
    assert_eq!(
        send(
            engine,
            &request(2, "initialize", json!({"protocolVersion": 1}))
        ),
        HEARTH_OK
    );
    recorder.response(2);
    let (_, message) = recorder.reaction_calls.lock().unwrap()[0].clone();
    assert!(message.unwrap().contains("on_frame"));
    assert_eq!(recorder.released.load(Ordering::Acquire), 0);
    free(engine);
    assert_eq!(recorder.released.load(Ordering::Acquire), 1);
}

#[test]
fn sends_from_on_frame_during_free_report_closed() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"events": [{"text": "Thinking"}, {"stallMs": 600_000}]}
    ]})))
    .unwrap();
    let recorder = Recorder::new(Reaction::SendWhileClosing);
    let (_, engine) = start(model_config(&mock).as_bytes(), &recorder);
    let session_id = open_session(engine, &recorder);
    // The model stalls, so this prompt is still running when the engine closes.
    assert_eq!(prompt(engine, &session_id, "Wait."), HEARTH_OK);
    recorder.closing.store(true, Ordering::Release);
    free(engine);

    assert_eq!(recorder.response(3).0["result"]["stopReason"], "cancelled");
    let calls = recorder.reaction_calls.lock().unwrap();
    assert!(!calls.is_empty(), "no frame was delivered during the free");
    assert!(
        calls
            .iter()
            .all(|(status, _)| *status == Some(HEARTH_CLOSED)),
        "{calls:?}"
    );
    assert_eq!(recorder.released.load(Ordering::Acquire), 1);
    assert_eq!(recorder.frames_after_release.load(Ordering::Acquire), 0);
}
