//! What the in-process benches share: a Rust `Host` that hands each frame to the timing
//! thread, a client over it, and the statistics they print.

#![allow(dead_code)] // each bench uses a different part

pub mod spawned;

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_core::{Config, Engine, Host};
use hearth_mock_llm::MockLlm;
use serde_json::{Value, json};

struct Channel(Mutex<Sender<String>>);

impl Host for Channel {
    fn deliver(&self, frame: &str) {
        let _ = self.0.lock().unwrap().send(frame.to_string());
    }
}

/// The two wire APIs the engine's providers speak, and the mock with them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Api {
    OpenAi,
    Anthropic,
}

impl Api {
    /// The path of a streamed request under the mock's `/v1`.
    pub fn path(self) -> &'static str {
        match self {
            Api::OpenAi => "/chat/completions",
            Api::Anthropic => "/messages",
        }
    }
}

pub struct Client {
    pub engine: Engine,
    pub frames: Receiver<String>,
    next: u64,
}

impl Client {
    pub fn start(mock: &MockLlm, dir: &std::path::Path) -> Client {
        Client::start_at(&mock.base_url(), dir)
    }

    /// An engine whose OpenAI provider is at `base_url` (the mock, or a relay in front of it).
    pub fn start_at(base_url: &str, dir: &std::path::Path) -> Client {
        Client::start_api(Api::OpenAi, base_url, dir)
    }

    /// An engine whose model is served by `api`'s provider at `base_url`.
    pub fn start_api(api: Api, base_url: &str, dir: &std::path::Path) -> Client {
        let (model, provider) = match api {
            Api::OpenAi => ("bench", "openai"),
            Api::Anthropic => ("claude-bench", "anthropic"),
        };
        let endpoint = json!({"baseUrl": base_url, "apiKey": "bench", "maxRetries": 0});
        let config = json!({"dataDir": std::env::var("BENCH_DATA").map(Value::from).unwrap_or(json!(dir)), "model": model, "permissionMode": "bypass",
            "providers": {provider: endpoint}});
        let (tx, frames) = mpsc::channel();
        let engine = Engine::start(
            Config::from_json(&config.to_string()).unwrap(),
            Arc::new(Channel(Mutex::new(tx))),
        )
        .unwrap();
        let mut client = Client {
            engine,
            frames,
            next: 1,
        };
        client.call("initialize", json!({"protocolVersion": 1}));
        client
    }

    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        self.engine
            .send(
                &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                    .to_string(),
            )
            .unwrap();
        id
    }

    fn next_frame(&self) -> String {
        self.frames
            .recv_timeout(Duration::from_secs(60))
            .expect("a frame")
    }

    /// Waits for the frame `pred` accepts, counting the frames before it.
    pub fn until(&self, pred: impl Fn(&str) -> bool) -> usize {
        let mut seen = 1;
        while !pred(&self.next_frame()) {
            seen += 1;
        }
        seen
    }

    /// Waits for the frame `pred` accepts, and returns it.
    pub fn first(&self, pred: impl Fn(&str) -> bool) -> String {
        loop {
            let frame = self.next_frame();
            if pred(&frame) {
                return frame;
            }
        }
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        let wanted = format!(r#""id":{id},"#);
        let answer = self.first(|f| f.contains(&wanted) && !f.contains(r#""method""#));
        serde_json::from_str(&answer).unwrap()
    }
}

pub fn median(v: Vec<f64>) -> f64 {
    percentile(v, 0.5)
}

pub fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}
