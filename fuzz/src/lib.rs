//! What the fuzz targets share: one engine per process behind a recording host, the JSON-RPC
//! rule for which frames must be answered, and the "every request answered exactly once"
//! check.
//!
//! The check works on counts per id. For every frame a target sends, [`expected_answer`]
//! says — from the JSON-RPC 2.0 spec alone, not from Hearth's code — whether it must be
//! answered and with which id (`null` when no id can be read). After the frames, a sentinel
//! request follows; the round waits until every expected answer arrived (answers may come
//! asynchronously, from session actors and turns), flushes once more with a second
//! sentinel, then requires the answers per id to equal the expected counts exactly: nothing
//! unanswered, nothing answered twice, notifications and responses never answered.
//!
//! Any panic anywhere in the process aborts (libfuzzer-sys installs that panic hook), so a
//! panicking engine task is a crash even though the engine would turn it into an error frame.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use hearth_core::{Config, Engine, EngineError, Host};
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// How long a round may wait for its answers before it is declared a hang. Generous: the
/// fuzzer runs instrumented code, and CI machines are small.
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(20);

/// Rounds after which the engine is replaced by a fresh one, so that sessions created by
/// fuzz inputs (which live as long as the engine) don't grow the process without bound.
const ROUNDS_PER_ENGINE: u64 = 5_000;

/// The canonical key of an id: its compact JSON (`1`, `"a"`, `null`).
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

/// Whether the JSON-RPC 2.0 spec requires an answer to `frame`, and with which id:
/// `Some(id)` for one answer (`Value::Null` when the id can't be read), `None` for none
/// (a notification, or a response).
///
/// - response-shaped (no `method`, a `result` or an `error`): never answered, whatever its
///   `id` or `jsonrpc` (answering a malformed response can make two peers loop);
/// - not UTF-8 / not JSON: parse error, answered with `null`; a number no `f64` holds
///   (`1e400`) is still JSON — where a member must be a string or an integer it is neither —
///   and a string holding a lone surrogate is not (no Rust string can hold it);
/// - not an object (a scalar, or a batch, which Hearth documents it does not support):
///   answered with `null`;
/// - an `id` that is not a string or an integer: answered with `null`;
/// - `jsonrpc` other than `"2.0"`: answered (its id, or `null`);
/// - `method` a string: a request (has `id`) is answered with its id — also when its
///   `params` are not structured — and a notification (no `id`) never is;
/// - `method` present but not a string: answered;
/// - no `method` and neither `result` nor `error`: answered.
pub fn expected_answer(frame: &[u8]) -> Option<Value> {
    let Ok(text) = std::str::from_utf8(frame) else {
        return Some(Value::Null);
    };
    let Ok(value) = serde_json::from_str::<Value>(&out_of_range_as_null(text)) else {
        return Some(Value::Null);
    };
    let Value::Object(object) = value else {
        return Some(Value::Null);
    };
    if !object.contains_key("method")
        && (object.contains_key("result") || object.contains_key("error"))
    {
        return None;
    }
    let id = match object.get("id") {
        None => None,
        Some(v @ Value::String(_)) => Some(v.clone()),
        Some(v @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(v.clone()),
        Some(_) => return Some(Value::Null),
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(reply_id);
    }
    match object.get("method") {
        Some(Value::String(_)) => id,
        Some(_) => Some(reply_id),
        None => Some(reply_id),
    }
}

/// `text` with each number token outside strings that is JSON but that serde_json reads as no
/// `f64` written `null`, so a JSON tree can be read from it: such a number is valid JSON (the
/// engine keeps `params` as text, and checks a member it must read as a string or an integer
/// by its type), and `null` is, as it is, neither a string nor an integer. JSON's number
/// grammar and the range are serde_json's, not Rust's `f64` parser's, which takes forms JSON
/// does not (`1.e999`, `01e999`) and reads some numbers near `f64::MAX` that serde_json refuses.
fn out_of_range_as_null(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let (mut tamed, mut copied, mut at, mut in_string) = (String::new(), 0, 0, false);
    while at < bytes.len() {
        let byte = bytes[at];
        if in_string {
            match byte {
                b'\\' => at += 1,
                b'"' => in_string = false,
                _ => {}
            }
            at += 1;
        } else if byte == b'"' {
            in_string = true;
            at += 1;
        } else if byte == b'-' || byte.is_ascii_digit() {
            let start = at;
            while at < bytes.len()
                && matches!(bytes[at], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                at += 1;
            }
            if is_json_beyond_f64(&text[start..at]) {
                tamed.push_str(&text[copied..start]);
                tamed.push_str("null");
                copied = at;
            }
        } else {
            at += 1;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    tamed.push_str(&text[copied..]);
    Cow::Owned(tamed)
}

/// Whether `token` is a JSON number that serde_json reads as no `f64`.
fn is_json_beyond_f64(token: &str) -> bool {
    serde_json::from_str::<&RawValue>(token).is_ok() && serde_json::from_str::<f64>(token).is_err()
}

/// What the host recorded since the round began.
#[derive(Default)]
struct Inbox {
    /// Answers (frames with an `id` and no `method`) per id key.
    answers: HashMap<String, u32>,
    /// The last answer per id key, for the targets that read results (session ids).
    last_answer: HashMap<String, Value>,
    /// Outbound frames that are not JSON-RPC messages at all.
    malformed: Vec<String>,
    /// The last few frames, for the report when a check fails.
    recent: Vec<String>,
    frames: u64,
}

const RECENT: usize = 64;

/// The engine's host: records answers, and answers the engine's own requests to the client
/// (it calls `Engine::send` re-entrantly from `deliver`, as hosts may).
struct Recorder {
    inbox: Mutex<Inbox>,
    changed: Condvar,
    engine: Mutex<Weak<Engine>>,
}

impl Host for Recorder {
    fn deliver(&self, frame: &str) {
        let value: Option<Value> = serde_json::from_str(frame).ok();
        let mut reply = None;
        {
            let mut inbox = self.inbox.lock().unwrap_or_else(|p| p.into_inner());
            inbox.frames += 1;
            if inbox.recent.len() == RECENT {
                inbox.recent.remove(0);
            }
            inbox.recent.push(truncate(frame, 600));
            match value.as_ref().and_then(Value::as_object) {
                Some(o) if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") => {
                    inbox.malformed.push(truncate(frame, 2000))
                }
                Some(o) if o.contains_key("method") && o.contains_key("id") => {
                    // A request to the client: refuse permission, refuse everything else.
                    reply = Some(client_reply(o["id"].clone(), &o["method"]));
                }
                Some(o) if o.contains_key("method") => {} // a notification
                Some(o) if o.contains_key("id") => {
                    let key = id_key(&o["id"]);
                    *inbox.answers.entry(key.clone()).or_default() += 1;
                    inbox.last_answer.insert(key, value.clone().unwrap_or_default());
                }
                _ => inbox.malformed.push(truncate(frame, 2000)),
            }
        }
        self.changed.notify_all();
        if let Some(reply) = reply {
            let engine = self.engine.lock().unwrap_or_else(|p| p.into_inner()).upgrade();
            if let Some(engine) = engine {
                // Closed is fine: the engine is being replaced.
                let _ = engine.send(&reply);
            }
        }
    }
}

/// The host's answer to a request from the agent: permission requests are cancelled (so no
/// tool with side effects ever runs), any other request is refused.
fn client_reply(id: Value, method: &Value) -> String {
    let outcome = if method == "session/request_permission" {
        json!({ "result": { "outcome": { "outcome": "cancelled" } } })
    } else {
        json!({ "error": { "code": -32601, "message": "not offered by the fuzz host" } })
    };
    let mut frame = json!({ "jsonrpc": "2.0", "id": id });
    for (k, v) in outcome.as_object().into_iter().flatten() {
        frame[k] = v.clone();
    }
    frame.to_string()
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

/// A directory that exists for the life of the process: the sessions' cwd.
pub fn workspace() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hearth-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("cannot create the fuzz workspace");
        std::fs::write(dir.join("README.md"), "fuzz workspace\n").ok();
        dir
    })
    .clone()
}

/// An engine with its recording host, replaced every [`ROUNDS_PER_ENGINE`] rounds.
pub struct Harness {
    config: String,
    host: Arc<Recorder>,
    engine: Option<Arc<Engine>>,
    rounds: u64,
    /// A session created right after `initialize`, for targets that need one.
    pub session: String,
    next_id: AtomicU64,
}

impl Harness {
    /// Starts an engine on `config` (JSON), initializes it and opens one session.
    pub fn new(config: &str) -> Harness {
        let host = Arc::new(Recorder {
            inbox: Mutex::new(Inbox::default()),
            changed: Condvar::new(),
            engine: Mutex::new(Weak::new()),
        });
        let mut harness = Harness {
            config: config.to_string(),
            host,
            engine: None,
            rounds: 0,
            session: String::new(),
            next_id: AtomicU64::new(1),
        };
        // Send after close, once per process (restart checks it again every
        // ROUNDS_PER_ENGINE rounds): the first restart closes this throwaway engine.
        harness.restart();
        harness.restart();
        harness
    }

    fn restart(&mut self) {
        if let Some(old) = self.engine.take() {
            old.close().expect("close failed");
            let delivered = self.host.inbox.lock().unwrap().frames;
            // After close: every send is refused, nothing is delivered any more.
            assert_eq!(old.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#), Err(EngineError::Closed));
            assert_eq!(old.send_bytes(b"\xff"), Err(EngineError::Closed));
            assert_eq!(old.close(), Ok(()), "close is idempotent");
            assert_eq!(self.host.inbox.lock().unwrap().frames, delivered, "a frame after close");
        }
        let config = Config::from_json(&self.config).expect("the fuzz config is valid");
        let engine = Arc::new(Engine::start(config, self.host.clone()).expect("engine starts"));
        *self.host.engine.lock().unwrap() = Arc::downgrade(&engine);
        self.engine = Some(engine);
        self.clear();
        let init = self.fresh_id("init");
        self.send_text(&request(&init, "initialize", json!({ "protocolVersion": 1 })));
        self.wait_answer(&init).expect("initialize is answered");
        self.session = self.new_session().expect("session/new succeeds");
        self.clear();
    }

    pub fn engine(&self) -> &Engine {
        self.engine.as_ref().expect("an engine")
    }

    /// An id no fuzz input can contain: a string with a per-process counter.
    pub fn fresh_id(&self, tag: &str) -> Value {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        Value::String(format!("\u{1}hearth-fuzz-{tag}-{n}"))
    }

    /// A fresh integer id, unique in this process (above anything `fresh_ids` handed out).
    pub fn fresh_number(&self) -> u64 {
        1_000_000_000 + self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    pub fn send_text(&self, frame: &str) {
        self.engine().send(frame).expect("the engine accepts frames while open");
    }

    pub fn send_bytes(&self, frame: &[u8]) {
        self.engine().send_bytes(frame).expect("the engine accepts frames while open");
    }

    /// Forgets what was recorded.
    pub fn clear(&self) {
        let mut inbox = self.host.inbox.lock().unwrap();
        inbox.answers.clear();
        inbox.last_answer.clear();
        inbox.recent.clear();
        assert!(
            inbox.malformed.is_empty(),
            "the engine sent frames that are not JSON-RPC 2.0 messages: {:#?}",
            inbox.malformed
        );
    }

    /// Waits for the answer to `id`; `None` after [`ANSWER_DEADLINE`].
    pub fn wait_answer(&self, id: &Value) -> Option<Value> {
        let key = id_key(id);
        let deadline = Instant::now() + ANSWER_DEADLINE;
        let mut inbox = self.host.inbox.lock().unwrap();
        loop {
            if let Some(answer) = inbox.last_answer.get(&key) {
                return Some(answer.clone());
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            inbox = self.host.changed.wait_timeout(inbox, left).unwrap().0;
        }
    }

    /// `session/new` in the workspace; the new session's id.
    pub fn new_session(&self) -> Option<String> {
        self.new_session_with_id().1
    }

    /// `session/new` in the workspace: the request's id (to count its answer) and the new
    /// session's id.
    pub fn new_session_with_id(&self) -> (Value, Option<String>) {
        let id = self.fresh_id("new");
        let cwd = workspace();
        self.send_text(&request(&id, "session/new", json!({ "cwd": cwd, "mcpServers": [] })));
        let session = self
            .wait_answer(&id)
            .and_then(|answer| answer["result"]["sessionId"].as_str().map(str::to_string));
        (id, session)
    }

    /// Begins a round: forgets earlier answers, replacing the engine when it is due.
    pub fn begin_round(&mut self) {
        self.rounds += 1;
        if self.rounds % ROUNDS_PER_ENGINE == 0 {
            self.restart();
        }
        self.clear();
    }

    /// Ends a round: `expected` holds how many answers each id key must get. Panics (a
    /// crash for the fuzzer) when an answer is missing after the deadline or extra.
    pub fn end_round(&self, mut expected: BTreeMap<String, u32>, input: &dyn std::fmt::Debug) {
        let sentinel = self.fresh_id("sentinel");
        self.send_text(&sentinel_frame(&sentinel));
        *expected.entry(id_key(&sentinel)).or_default() += 1;

        let deadline = Instant::now() + ANSWER_DEADLINE;
        let missing = |inbox: &Inbox| -> Vec<(String, u32, u32)> {
            expected
                .iter()
                .filter_map(|(k, &want)| {
                    let got = inbox.answers.get(k).copied().unwrap_or(0);
                    (got < want).then(|| (k.clone(), want, got))
                })
                .collect()
        };
        {
            let mut inbox = self.host.inbox.lock().unwrap();
            loop {
                let still = missing(&inbox);
                if still.is_empty() {
                    break;
                }
                let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                    panic!(
                        "HANG: no answer within {ANSWER_DEADLINE:?} for (id, expected, got) {still:?}\n\
                         input: {input:?}\nlast frames out: {:#?}",
                        inbox.recent
                    );
                };
                inbox = self.host.changed.wait_timeout(inbox, left).unwrap().0;
            }
        }
        // Whatever the engine had queued by now is delivered before this answer.
        let flush = self.fresh_id("flush");
        self.send_text(&sentinel_frame(&flush));
        *expected.entry(id_key(&flush)).or_default() += 1;
        if self.wait_answer(&flush).is_none() {
            panic!("HANG: the flush sentinel was not answered; input: {input:?}");
        }
        let inbox = self.host.inbox.lock().unwrap();
        let mut wrong = Vec::new();
        for (key, &got) in &inbox.answers {
            let want = expected.get(key).copied().unwrap_or(0);
            if got != want {
                wrong.push((key.clone(), want, got));
            }
        }
        assert!(
            wrong.is_empty(),
            "ANSWERED WRONG NUMBER OF TIMES: (id, expected, got) {wrong:?}\ninput: {input:?}\n\
             last frames out: {:#?}",
            inbox.recent
        );
        assert!(
            inbox.malformed.is_empty(),
            "the engine sent frames that are not JSON-RPC 2.0 messages: {:#?}\ninput: {input:?}",
            inbox.malformed
        );
    }
}

/// A request for a method nobody serves: answered at once (-32601), and it changes nothing.
fn sentinel_frame(id: &Value) -> String {
    request(id, "_hearth_fuzz/sentinel", json!({}))
}

/// A request frame.
pub fn request(id: &Value, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

/// A config for an engine that never reaches a model: the provider is a closed local port,
/// so nothing leaves the machine, and a failed connection is not retried.
pub fn offline_config() -> String {
    json!({
        "dataDir": ":memory:",
        "workerThreads": 2,
        "providers": { "openai": {
            "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "fuzz", "maxRetries": 0
        } },
        "streamIdleTimeoutSecs": 1,
    })
    .to_string()
}

/// Adds `frame`'s expected answer (see [`expected_answer`]) to `expected`.
pub fn expect(expected: &mut BTreeMap<String, u32>, frame: &[u8]) {
    if let Some(id) = expected_answer(frame) {
        *expected.entry(id_key(&id)).or_default() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
        let e = |s: &str| expected_answer(s.as_bytes());
        assert_eq!(e("{"), Some(Value::Null));
        assert_eq!(e("[]"), Some(Value::Null));
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#), Some(json!(1)));
        assert_eq!(e(r#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(e(r#"{"jsonrpc":"2.0","method":"x","params":3}"#), None);
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":"a","method":"x","params":3}"#), Some(json!("a")));
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#), Some(Value::Null));
        assert_eq!(e(r#"{"jsonrpc":"1.0","id":7,"method":"x"}"#), Some(json!(7)));
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":7,"result":null}"#), None);
        // Response-shaped frames are never answered, however malformed.
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":7,"result":1,"error":{}}"#), None);
        assert_eq!(e(r#"{"jsonrpc":"2.0","result":1}"#), None);
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}"#), None);
        assert_eq!(e(r#"{"jsonrpc":"1.0","id":7,"result":1}"#), None);
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":7}"#), Some(json!(7)));
        assert_eq!(expected_answer(b"\xff"), Some(Value::Null));
        // A number no f64 holds is JSON: neither a string nor an integer where one is due.
        assert_eq!(e(r#"{"jsonrpc":1e400,"id":"l","method":"x"}"#), Some(json!("l")));
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":-1E+999,"method":"x"}"#), Some(Value::Null));
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":2,"method":"x","params":[1e400]}"#), Some(json!(2)));
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":"1e400","method":"x"}"#), Some(json!("1e400")));
        // JSON's number grammar and range, not Rust's: `1.e999` is no JSON, and serde_json
        // reads no f64 from this one, which Rust reads as f64::MAX.
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1.e999]}"#), Some(Value::Null));
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[01e999]}"#), Some(Value::Null));
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[-.5e999]}"#), Some(Value::Null));
        assert_eq!(
            e(r#"{"jsonrpc":"2.0","id":2,"method":"x","params":[17976931348623158e292]}"#),
            Some(json!(2))
        );
        // A lone surrogate is no text.
        assert_eq!(e(r#"{"jsonrpc":"2.0","id":3,"method":"x","params":["\ud800"]}"#), Some(Value::Null));
    }
}
