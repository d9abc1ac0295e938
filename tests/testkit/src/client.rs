//! A minimal ACP client for tests: it numbers its requests, waits for answers, keeps every
//! frame it received, and checks each one against the schema as it arrives.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Schema, Transport};

/// How long a test waits for any single frame before failing.
pub const PATIENCE: Duration = Duration::from_secs(20);

fn schema() -> Arc<Schema> {
    static SCHEMA: OnceLock<Arc<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| Arc::new(Schema::load())).clone()
}

/// Answers the agent's requests to the client: `(method, params) -> result`, or `None` to
/// leave the request unanswered (the test answers it itself, or never).
pub type Responder = Box<dyn FnMut(&str, &Value) -> Option<Value> + Send>;

pub struct AcpClient<T: Transport> {
    pub transport: T,
    next_id: u64,
    methods: HashMap<String, String>,
    /// Every frame received, in arrival order.
    pub received: Vec<Value>,
    responder: Option<Responder>,
}

impl<T: Transport> AcpClient<T> {
    pub fn new(transport: T) -> Self {
        AcpClient {
            transport,
            next_id: 1,
            methods: HashMap::new(),
            received: Vec::new(),
            responder: None,
        }
    }

    /// Serves the agent's requests (permission, fs, terminal) from now on.
    pub fn respond_with(
        &mut self,
        responder: impl FnMut(&str, &Value) -> Option<Value> + Send + 'static,
    ) {
        self.responder = Some(Box::new(responder));
    }

    /// Answers an agent request by hand.
    pub fn answer(&mut self, request: &Value, result: Value) {
        let frame = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
        self.transport.send(&frame.to_string());
    }

    /// The requests the agent sent to the client, in order.
    pub fn agent_requests(&self, method: &str) -> Vec<Value> {
        self.received
            .iter()
            .filter(|f| f["method"] == method && f.get("id").is_some())
            .cloned()
            .collect()
    }

    pub fn send_raw(&mut self, frame: &str) {
        self.transport.send(frame);
    }

    /// Sends a frame built by the caller, remembering the method of a request so its
    /// response can be checked against the right schema type.
    pub fn send_frame(&mut self, frame: &Value) {
        if let (Some(id), Some(method)) = (frame.get("id"), frame["method"].as_str()) {
            self.methods.insert(id.to_string(), method.to_string());
        }
        self.transport.send(&frame.to_string());
    }

    /// Sends a request and returns its id without waiting.
    pub fn start_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.methods.insert(id.to_string(), method.to_string());
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.transport.send(&frame.to_string());
        id
    }

    /// Sends a request and waits for its response frame.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start_request(method, params);
        self.response(&id)
    }

    /// The `result` of a request that must succeed.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    /// The `error` of a request that must fail.
    pub fn call_err(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        match response.get("error") {
            Some(error) => error.clone(),
            None => panic!("{method} should have failed: {response}"),
        }
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let frame = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.transport.send(&frame.to_string());
    }

    /// Waits for the response to `id`; frames arriving meanwhile are kept in `received`.
    pub fn response(&mut self, id: &Value) -> Value {
        let already = self
            .received
            .iter()
            .find(|f| is_response_to(f, id))
            .cloned();
        if let Some(frame) = already {
            return frame;
        }
        loop {
            let frame = self
                .next(PATIENCE)
                .unwrap_or_else(|| panic!("no response to request {id} within {PATIENCE:?}"));
            if is_response_to(&frame, id) {
                return frame;
            }
        }
    }

    /// Receives frames until `pred` matches one (returned) or `timeout` passes (`None`).
    pub fn wait_for(&mut self, timeout: Duration, pred: impl Fn(&Value) -> bool) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self.next(left)?;
            if pred(&frame) {
                return Some(frame);
            }
        }
    }

    /// The next frame within `timeout`, validated against the schema.
    pub fn next(&mut self, timeout: Duration) -> Option<Value> {
        let raw = self.transport.recv(timeout)?;
        assert!(!raw.contains('\n'), "a frame must be one line: {raw}");
        let frame: Value = serde_json::from_str(&raw)
            .unwrap_or_else(|e| panic!("agent sent invalid JSON ({e}): {raw}"));
        let method = frame
            .get("id")
            .and_then(|id| self.methods.get(&id.to_string()));
        if let Err(e) = schema().check(&frame, method.map(String::as_str)) {
            panic!("frame violates the ACP schema: {e}\n{frame}");
        }
        self.received.push(frame.clone());
        if let (Some(method), Some(_)) = (frame["method"].as_str(), frame.get("id"))
            && let Some(responder) = self.responder.as_mut()
            && let Some(result) = responder(method, &frame["params"])
        {
            self.answer(&frame, result);
        }
        Some(frame)
    }

    /// Collects whatever arrives within `quiet`, e.g. to prove that nothing more comes.
    pub fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut got = Vec::new();
        while let Some(frame) = self.next(quiet) {
            got.push(frame);
        }
        got
    }

    /// The `update` objects of every `session/update` received for `session`.
    pub fn updates(&self, session: &str) -> Vec<Value> {
        self.received
            .iter()
            .filter(|f| f["method"] == "session/update" && f["params"]["sessionId"] == session)
            .map(|f| f["params"]["update"].clone())
            .collect()
    }

    pub fn initialize(&mut self) -> Value {
        self.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "hearth-testkit", "version": "0"}}),
        )
    }

    pub fn new_session(&mut self, cwd: &str) -> String {
        let result = self.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        result["sessionId"].as_str().expect("sessionId").to_string()
    }

    /// Sends a text prompt and waits for its response frame.
    pub fn prompt(&mut self, session: &str, text: &str) -> Value {
        let request = self.start_prompt(session, text);
        self.response(&request)
    }

    /// Sends a text prompt without waiting; returns its id, for [`AcpClient::response`].
    pub fn start_prompt(&mut self, session: &str, text: &str) -> Value {
        self.start_request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }
}

fn is_response_to(frame: &Value, id: &Value) -> bool {
    frame.get("id") == Some(id) && frame.get("method").is_none()
}

/// The concatenated text of the `agent_message_chunk` updates in `updates`.
pub fn agent_text(updates: &[Value]) -> String {
    chunk_text(updates, "agent_message_chunk")
}

pub fn chunk_text(updates: &[Value], kind: &str) -> String {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}
