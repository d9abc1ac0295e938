//! Request handling: the two model endpoints, recording, and the `/_mock/*` control routes.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures::channel::mpsc;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::anthropic::Anthropic;
use crate::dialect::{self, Dialect};
use crate::openai::OpenAi;
use crate::script::{Response, Script};

pub(crate) type Body = UnsyncBoxBody<Bytes, io::Error>;
type HttpResponse = hyper::Response<Body>;

/// A model request as the mock received it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Lower-cased names; repeated headers are joined with ", ".
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body, or the raw text when it was not JSON.
    pub body: Value,
    /// The body's bytes as text, exactly as sent (for tests of what stays byte-identical
    /// from one request to the next).
    #[serde(default)]
    pub raw: String,
    /// When it arrived, in microseconds since the server started (for measurements, and to
    /// see which concurrent requests overlapped).
    #[serde(default)]
    pub at_us: u64,
    /// The connection it came on, numbered from 1 in the order they were accepted (to see
    /// whether a client reuses its connections).
    #[serde(default)]
    pub connection: u64,
}

/// State shared by the server and the [`crate::MockLlm`] handle.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Numbers the completions' ids, so each reply is distinguishable.
    completions: AtomicU64,
    started: Instant,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Response>,
    requests: Vec<Received>,
}

/// A model request as it is kept: its body as text, parsed into a [`RecordedRequest`]'s JSON
/// only when a test reads it. A long session's requests are megabytes each, and building
/// their JSON tree as each arrived put the mock's work beside the engine's in what the
/// benches time (`core/benches/turn.rs`'s steps).
#[derive(Clone)]
struct Received {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    /// Shared, so that reading the requests copies no body under the lock.
    raw: Arc<str>,
    /// Whether the body is JSON.
    json: bool,
    at_us: u64,
    connection: u64,
}

impl Received {
    fn recorded(&self) -> RecordedRequest {
        let body = match self.json {
            true => serde_json::from_str(&self.raw).expect("recorded as JSON once parsed"),
            false => Value::String(self.raw.to_string()),
        };
        RecordedRequest {
            method: self.method.clone(),
            path: self.path.clone(),
            headers: self.headers.clone(),
            body,
            raw: self.raw.to_string(),
            at_us: self.at_us,
            connection: self.connection,
        }
    }
}

/// What answering a request reads of its body: the model it names and whether it streams.
#[derive(Deserialize)]
struct Asked {
    model: Option<String>,
    stream: Option<bool>,
}

/// The body's model and whether it streams; an error if it is not JSON. Reading the two
/// fields skips the rest without building it.
fn asked(bytes: &[u8]) -> Result<(Option<String>, bool), serde_json::Error> {
    if let Ok(asked) = serde_json::from_slice::<Asked>(bytes) {
        return Ok((asked.model, asked.stream == Some(true)));
    }
    // JSON of another shape (a `model` that is not a string) is still a request: read as any
    // value, with the defaults for what it does not say.
    let body = serde_json::from_slice::<Value>(bytes)?;
    Ok((
        body["model"].as_str().map(str::to_owned),
        body["stream"] == true,
    ))
}

impl Shared {
    pub(crate) fn new(script: Script) -> Shared {
        let shared = Shared {
            state: Mutex::default(),
            completions: AtomicU64::new(0),
            started: Instant::now(),
        };
        shared.append(script.responses);
        shared
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The lock is never held across a panic point, so a poisoned state is still sound.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn append(&self, responses: impl IntoIterator<Item = Response>) {
        self.state().queue.extend(responses);
    }

    /// Parsed once taken out of the state: a test reading them while requests arrive does
    /// not hold those up.
    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        let received = self.state().requests.clone();
        received.iter().map(Received::recorded).collect()
    }

    pub(crate) fn last_request(&self) -> Option<RecordedRequest> {
        let last = self.state().requests.last().cloned();
        last.as_ref().map(Received::recorded)
    }

    pub(crate) fn remaining(&self) -> usize {
        self.state().queue.len()
    }
}

enum Api {
    OpenAi,
    Anthropic,
}

/// Answers `request`, which came on connection number `connection`.
pub(crate) async fn handle(
    shared: &Shared,
    connection: u64,
    request: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    Ok(match (&method, path.as_str()) {
        (&Method::POST, "/v1/chat/completions") => {
            model(shared, Api::OpenAi, connection, request).await
        }
        (&Method::POST, "/v1/messages") => model(shared, Api::Anthropic, connection, request).await,
        (&Method::GET, "/_mock/requests") => json(StatusCode::OK, &json!(shared.requests())),
        (&Method::POST, "/_mock/script") => append_script(shared, request).await,
        (&Method::POST, "/_mock/reset") => {
            *shared.state() = State::default();
            json(StatusCode::OK, &json!({"reset": true}))
        }
        (method, path) => {
            let message = format!("mock-llm: no route for {method} {path}");
            json(
                StatusCode::NOT_FOUND,
                &json!({"error": {"message": message, "type": "not_found"}}),
            )
        }
    })
}

async fn model(
    shared: &Shared,
    api: Api,
    connection: u64,
    request: Request<Incoming>,
) -> HttpResponse {
    let (parts, body) = request.into_parts();
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes());
        headers
            .entry(name.as_str().to_owned())
            .and_modify(|joined| *joined = format!("{joined}, {value}"))
            .or_insert_with(|| value.into_owned());
    }
    let bytes = read(body).await;
    let parsed = asked(&bytes);

    let model = match &parsed {
        Ok((Some(model), _)) => model.as_str(),
        _ => "mock-model",
    };
    let number = shared.completions.fetch_add(1, Ordering::Relaxed) + 1;
    let dialect: Box<dyn Dialect> = match api {
        Api::OpenAi => Box::new(OpenAi::new(number, model, unix_time())),
        Api::Anthropic => Box::new(Anthropic::new(number, model)),
    };
    let streaming = matches!(parsed, Ok((_, true)));

    // Record and take the next response in one step, so concurrent requests each get
    // their own response and appear in the log in the order they consumed the queue.
    let next = {
        let mut state = shared.state();
        state.requests.push(Received {
            method: parts.method.to_string(),
            path: parts.uri.path().to_owned(),
            headers,
            raw: String::from_utf8_lossy(&bytes).into(),
            json: parsed.is_ok(),
            at_us: shared.started.elapsed().as_micros() as u64,
            connection,
        });
        let raw = &state.requests[state.requests.len() - 1].raw;
        let taken = next_for(&state.queue, raw);
        parsed
            .is_ok()
            .then(|| taken.and_then(|at| state.queue.remove(at)))
            .flatten()
    };
    if let Err(e) = parsed {
        let message = format!("mock-llm: request body is not JSON: {e}");
        return dialect_error(&*dialect, StatusCode::BAD_REQUEST, &message);
    }
    let Some(response) = next else {
        let message = "mock-llm: script exhausted";
        return dialect_error(&*dialect, StatusCode::INTERNAL_SERVER_ERROR, message);
    };

    tokio::time::sleep(Duration::from_millis(response.delay_ms)).await;
    let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let content_type = match status.is_success() && streaming {
        true => "text/event-stream",
        false => "application/json",
    };
    let mut head = hyper::Response::builder()
        .status(status)
        .header(CONTENT_TYPE, content_type);
    for (name, value) in &response.headers {
        head = head.header(name, value);
    }
    let head = match head.body(()) {
        Ok(head) => head,
        Err(e) => {
            let message = format!("mock-llm: bad scripted header: {e}");
            return dialect_error(&*dialect, StatusCode::INTERNAL_SERVER_ERROR, &message);
        }
    };
    if !status.is_success() {
        let message = match response.error {
            Some(message) => message,
            None => format!("mock-llm: scripted HTTP {status}"),
        };
        return head.map(|()| full(dialect.error_body(status, &message).to_string()));
    }

    // One frame in flight: the producer waits until hyper has taken each frame, and on the
    // single-threaded runtime hyper writes it out before the producer runs again. So memory
    // stays bounded, and the bytes before a scripted truncation really reach the client.
    let (tx, rx) = mpsc::channel(0);
    if streaming {
        tokio::spawn(dialect::stream(dialect, response, tx));
    } else {
        tokio::spawn(dialect::complete(dialect, response, tx));
    }
    head.map(|()| StreamBody::new(rx).boxed_unsync())
}

/// The response a request of body `raw` takes: the first whose `when` it matches, else the
/// first that has no `when`.
fn next_for(queue: &VecDeque<Response>, raw: &str) -> Option<usize> {
    let matching = queue
        .iter()
        .position(|r| r.when.as_ref().is_some_and(|when| when.matches(raw)));
    matching.or_else(|| queue.iter().position(|r| r.when.is_none()))
}

async fn append_script(shared: &Shared, request: Request<Incoming>) -> HttpResponse {
    match serde_json::from_slice::<Script>(&read(request.into_body()).await) {
        Ok(script) => {
            let queued = script.responses.len();
            shared.append(script.responses);
            json(StatusCode::OK, &json!({"queued": queued}))
        }
        Err(e) => {
            let message = format!("mock-llm: bad script: {e}");
            let error = json!({"error": {"message": message, "type": "invalid_request_error"}});
            json(StatusCode::BAD_REQUEST, &error)
        }
    }
}

/// A body that fails to arrive means the client went away; what it would get back no longer
/// matters, so it is treated as empty.
async fn read(body: Incoming) -> Bytes {
    body.collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default()
}

fn dialect_error(dialect: &dyn Dialect, status: StatusCode, message: &str) -> HttpResponse {
    json(status, &dialect.error_body(status, message))
}

fn json(status: StatusCode, body: &Value) -> HttpResponse {
    let mut response = hyper::Response::new(full(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn full(body: String) -> Body {
    Full::new(Bytes::from(body))
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn unix_time() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
