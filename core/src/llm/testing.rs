//! Helpers for the provider tests: a scripted mock server, an endpoint pointing at it, and
//! a stream drained into its events and error.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use hearth_mock_llm::{MockLlm, Script};
use serde_json::Value;

use super::error::Failure;
use super::sse::{Decode, Flow};
use super::{ChatRequest, LlmError, Provider, StreamEvent};
use crate::chat::Message;
use crate::config::{Endpoint, Secret};
use eventsource_stream::Event;

/// Long enough for any test machine, short enough to keep a stall test quick.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// A mock server answering with `responses` (the README's script format), in order.
pub fn mock(responses: Value) -> MockLlm {
    let script: Script = serde_json::from_value(serde_json::json!({ "responses": responses }))
        .expect("a valid script");
    MockLlm::start(script).expect("the mock starts")
}

pub fn endpoint(mock: &MockLlm, max_retries: u32) -> Endpoint {
    Endpoint {
        base_url: mock.base_url(),
        api_key: Some(Secret::new("test-key")),
        default_base_url: false,
        max_retries,
    }
}

pub fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        system: "Be brief.".into(),
        earlier: 0,
        messages: Arc::new(messages),
        tools: Vec::new(),
        thought_level: None,
        hosted_search: None,
        wire: Default::default(),
        images: true,
    }
}

pub fn prompt(text: &str) -> Vec<Message> {
    vec![Message::user_text(text)]
}

/// Everything a stream yields: its events, then the error that ended it, if any. A failure
/// to start counts as an error with no events.
pub async fn run(
    provider: &dyn Provider,
    request: ChatRequest,
) -> (Vec<StreamEvent>, Option<LlmError>) {
    let mut stream = match provider.stream(request).await {
        Ok(stream) => stream,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => events.push(event),
            Err(e) => return (events, Some(e)),
        }
    }
    (events, None)
}

/// Runs a decoder over SSE data payloads, as if they had streamed, and then the body's end.
pub fn feed<D: Decode + Default>(
    payloads: impl IntoIterator<Item = String>,
) -> Result<Vec<StreamEvent>, Failure> {
    let mut decoder = D::default();
    let mut out = VecDeque::new();
    for data in payloads {
        let event = Event {
            data,
            ..Event::default()
        };
        if decoder.event(&event, &mut out)? == Flow::Done {
            return Ok(out.into());
        }
    }
    decoder.end(&mut out)?;
    Ok(out.into())
}
