//! Helpers shared by the integration tests. Each test binary uses a subset of them.
#![allow(dead_code)]

use hearth_mock_llm::MockLlm;
use serde_json::Value;

/// One server-sent event.
#[derive(Debug)]
pub struct Sse {
    pub event: Option<String>,
    pub data: String,
}

impl Sse {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("{e}: {}", self.data))
    }
}

/// Splits an SSE body into its events, checking the framing is what SSE parsers expect.
pub fn parse_sse(body: &str) -> Vec<Sse> {
    assert!(body.ends_with("\n\n"), "unterminated SSE body: {body:?}");
    body.trim_end_matches('\n')
        .split("\n\n")
        .map(|block| {
            let mut sse = Sse {
                event: None,
                data: String::new(),
            };
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    sse.event = Some(name.to_owned());
                } else if let Some(data) = line.strip_prefix("data: ") {
                    sse.data = data.to_owned();
                } else {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            sse
        })
        .collect()
}

/// The server's root, where the `/_mock/*` control routes live.
pub fn root(mock: &MockLlm) -> String {
    mock.base_url().strip_suffix("/v1").unwrap().to_owned()
}

/// An HTTP client for the tests. In a workspace build reqwest is compiled with the engine's
/// `rustls-no-provider` feature, which needs a process-wide crypto provider even for plain
/// HTTP; installing one is harmless when the feature is off.
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

pub async fn post(url: &str, body: &Value) -> reqwest::Response {
    http().post(url).json(body).send().await.unwrap()
}

pub fn script(json: Value) -> hearth_mock_llm::Script {
    serde_json::from_value(json).unwrap()
}
