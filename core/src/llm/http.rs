//! The HTTP side both providers share: a lazily built client, the timeouts, sending a
//! request with retries, and reading a provider's error body.

use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use reqwest::{Client, RequestBuilder, Response};
use serde_json::Value;

use super::body::Body;
use super::error::Failure;
use super::sse::{self, Decode};
use super::{EventStream, LlmError};
use super::{rate_reset, retry};
use crate::net::LazyClient;
use crate::net::root_cause;

/// Connecting never deserves more patience than this, whatever the idle timeout.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Transport {
    client: LazyClient,
    /// Time to the response headers, and the longest silence between two stream events.
    idle_timeout: Duration,
    max_retries: u32,
}

impl Transport {
    pub fn new(idle_timeout: Duration, max_retries: u32) -> Self {
        let connect_timeout = idle_timeout.min(MAX_CONNECT_TIMEOUT);
        Transport {
            client: LazyClient::new(move |builder| builder.connect_timeout(connect_timeout)),
            idle_timeout,
            max_retries,
        }
    }

    fn client(&self) -> Result<&Client, LlmError> {
        self.client.get().map_err(LlmError::new)
    }

    /// Sends the request `build` makes with `body` (again on each retry) and decodes its
    /// event stream with a fresh `D`.
    pub fn stream<D: Decode + Default>(
        &self,
        build: impl FnOnce(&Client) -> RequestBuilder,
        body: Body,
    ) -> BoxFuture<'static, Result<EventStream, LlmError>> {
        let request = match self.client() {
            Ok(client) => build(client),
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        let idle_timeout = self.idle_timeout;
        Box::pin(retry::with_retries(self.max_retries, move || {
            // Without its body, the request can always be cloned.
            let request = request.try_clone().map(|request| body.attach(request));
            async move {
                let request = request.ok_or_else(|| LlmError::new("cannot repeat the request"))?;
                let response = send(request, idle_timeout).await?;
                Ok(sse::decode(response, D::default(), idle_timeout))
            }
        }))
    }
}

/// Sends a request and waits for a successful answer's headers.
async fn send(request: RequestBuilder, timeout: Duration) -> Result<Response, Failure> {
    let not_in_time = || LlmError::new(format!("the model did not answer within {timeout:?}"));
    let response = tokio::time::timeout(timeout, request.send())
        .await
        .map_err(|_| not_in_time())?
        .map_err(|e| {
            let error = LlmError::new(format!("cannot reach the model: {}", root_cause(&e)));
            if e.is_builder() {
                Failure::from(error)
            } else {
                Failure::retryable(error)
            }
        })?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let now = SystemTime::now();
    let retry_after = retry::retry_after(response.headers(), now);
    let reset_at = rate_reset::reset_at(response.headers(), now);
    let body = tokio::time::timeout(timeout, response.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    Err(Failure {
        error: LlmError {
            message: error_message(&body),
            status: Some(status.as_u16()),
            code: error_code(&body),
            reset_at,
        },
        retryable: retry::retryable_status(status.as_u16()),
        retry_after,
    })
}

/// The provider's own message from an error body — OpenAI `{"error":{"message"}}`, Anthropic
/// `{"type":"error","error":{"type","message"}}`, or a bare `error`/`message` string — else
/// the start of the body.
pub fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
    });
    match message {
        Some(m) => m.to_string(),
        None if body.trim().is_empty() => "no error message".to_string(),
        None => body.chars().take(500).collect(),
    }
}

/// The provider's name for the error in its body: OpenAI's `error.code` (`insufficient_quota`,
/// `invalid_api_key`) else `error.type`, Anthropic's `error.type` (`rate_limit_error`).
fn error_code(body: &str) -> Option<String> {
    let parsed: Value = serde_json::from_str(body).ok()?;
    let error = parsed.get("error")?;
    let code = error.get("code").and_then(Value::as_str);
    code.or_else(|| error.get("type").and_then(Value::as_str))
        .map(str::to_string)
}
