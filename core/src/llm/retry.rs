//! Retries of a model request until its stream has started.
//!
//! A request is retried on 408, 409, 429 and 5xx answers (the statuses the official OpenAI
//! and Anthropic SDKs retry, which include Anthropic's 529 "overloaded"), on connection
//! errors, and on a retryable failure that arrives before the first event (a connection cut
//! or an Anthropic `overloaded_error` event right after the headers). Once an event has been
//! handed on, the output has reached the user and the request is never retried.
//!
//! The wait is the server's `Retry-After` (or `retry-after-ms`) when it sent one, capped at
//! [`MAX_RETRY_AFTER`] so a client never sits silent for minutes, else an exponential backoff
//! with jitter: about 0.5 s, 1 s, 2 s, … up to 8 s. Everything happens inside one future, so
//! dropping it (a cancelled turn) stops the waiting and the request at once.
//!
//! Tests: inline; end to end in `core/tests/providers.rs`.

use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::stream::{self, StreamExt};
use reqwest::header::HeaderMap;

use super::error::Failure;
use super::sse::RawEvents;
use super::{EventStream, LlmError};

/// The longest server-requested wait that is honoured; longer ones are cut to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// Whether an HTTP status is worth another attempt.
pub fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=599)
}

/// Runs `attempt` until its stream yields a first event, retrying retryable failures up to
/// `max_retries` times. The error of the last attempt is the one returned.
pub async fn with_retries<F, Fut>(max_retries: u32, mut attempt: F) -> Result<EventStream, LlmError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<RawEvents, Failure>>,
{
    let mut retries = 0;
    loop {
        let failure = match attempt().await {
            Ok(events) => match started(events).await {
                Ok(events) => return Ok(events),
                Err(failure) => failure,
            },
            Err(failure) => failure,
        };
        if !failure.retryable || retries >= max_retries {
            return Err(failure.error);
        }
        let wait = delay(retries, failure.retry_after);
        tracing::warn!(
            retry = retries + 1,
            of = max_retries,
            wait_ms = wait.as_millis() as u64,
            "model request failed, retrying: {}",
            failure.error
        );
        tokio::time::sleep(wait).await;
        retries += 1;
    }
}

/// Waits for the first event: until one arrives, a failure can still be retried unseen.
async fn started(mut events: RawEvents) -> Result<EventStream, Failure> {
    let first = match events.next().await {
        Some(Err(failure)) => return Err(failure),
        first => first,
    };
    Ok(stream::iter(first)
        .chain(events)
        .map(|event| event.map_err(|failure| failure.error))
        .boxed())
}

/// The wait before retry number `retry` (0-based).
fn delay(retry: u32, retry_after: Option<Duration>) -> Duration {
    match retry_after {
        Some(wait) => wait.min(MAX_RETRY_AFTER),
        None => backoff(retry),
    }
}

/// Exponential backoff, shortened by up to a quarter at random so that clients that failed
/// together do not come back together.
fn backoff(retry: u32) -> Duration {
    let full = FIRST_BACKOFF
        .saturating_mul(2u32.saturating_pow(retry))
        .min(MAX_BACKOFF);
    full.mul_f64(1.0 - 0.25 * jitter())
}

/// A number in [0, 1) that differs from call to call; good enough to spread retries.
fn jitter() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    f64::from(nanos) / 1e9
}

/// The server's requested wait: `retry-after-ms` (OpenAI, Anthropic), else `Retry-After` in
/// seconds or as an HTTP date.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use reqwest::header::HeaderValue;
    use serde_json::json;

    use super::*;
    use crate::llm::openai::OpenAi;
    use crate::llm::testing::{self, IDLE_TIMEOUT};
    use crate::llm::{Provider, StreamEvent};

    async fn run(
        mock: &hearth_mock_llm::MockLlm,
        max_retries: u32,
    ) -> (Vec<StreamEvent>, Option<LlmError>) {
        let provider = OpenAi::new(testing::endpoint(mock, max_retries), IDLE_TIMEOUT);
        testing::run(&provider, testing::request(testing::prompt("hi"))).await
    }

    fn hello() -> serde_json::Value {
        json!({ "events": [{ "text": "Hello." }] })
    }

    #[tokio::test]
    async fn honours_retry_after_then_succeeds() {
        let mock = testing::mock(json!([
            { "status": 429, "headers": { "retry-after": "1" }, "error": "rate limited" },
            hello(),
        ]));
        let started = Instant::now();
        let (events, error) = run(&mock, 3).await;
        assert_eq!(error, None);
        assert_eq!(events[0], StreamEvent::Text("Hello.".into()));
        assert_eq!(mock.requests().len(), 2);
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn retries_server_errors_then_succeeds() {
        let mock = testing::mock(json!([
            { "status": 500, "error": "boom" },
            { "status": 500, "error": "boom again" },
            hello(),
        ]));
        let (events, error) = run(&mock, 3).await;
        assert_eq!(error, None);
        assert_eq!(events[0], StreamEvent::Text("Hello.".into()));
        assert_eq!(mock.requests().len(), 3);
    }

    #[tokio::test]
    async fn gives_the_last_error_when_retries_run_out() {
        let mock = testing::mock(json!([
            { "status": 500, "error": "first" },
            { "status": 503, "error": "second" },
            { "status": 502, "error": "third" },
            hello(),
        ]));
        let (events, error) = run(&mock, 2).await;
        assert!(events.is_empty());
        assert_eq!(
            error,
            Some(LlmError {
                message: "third".into(),
                status: Some(502),
                code: Some("server_error".into()),
                ..LlmError::default()
            })
        );
        assert_eq!(mock.requests().len(), 3);
    }

    #[tokio::test]
    async fn never_retries_once_output_has_streamed() {
        let mock = testing::mock(json!([
            { "events": [{ "text": "Half an ans" }], "truncate": true },
            hello(),
        ]));
        let (events, error) = run(&mock, 3).await;
        assert_eq!(events, [StreamEvent::Text("Half an ans".into())]);
        assert!(error.is_some());
        assert_eq!(mock.requests().len(), 1);
    }

    #[tokio::test]
    async fn retries_a_stream_cut_before_any_output() {
        let mock = testing::mock(json!([{ "truncate": true }, hello()]));
        let (events, error) = run(&mock, 3).await;
        assert_eq!(error, None);
        assert_eq!(events[0], StreamEvent::Text("Hello.".into()));
        assert_eq!(mock.requests().len(), 2);
    }

    #[tokio::test]
    async fn client_errors_are_not_retried() {
        let mock = testing::mock(json!([{ "status": 401, "error": "invalid x-api-key" }, hello()]));
        let (_, error) = run(&mock, 3).await;
        assert_eq!(
            error,
            Some(LlmError {
                message: "invalid x-api-key".into(),
                status: Some(401),
                code: Some("authentication_error".into()),
                ..LlmError::default()
            })
        );
        assert_eq!(mock.requests().len(), 1);
    }

    #[tokio::test]
    async fn connection_errors_are_retried_then_reported() {
        let mock = testing::mock(json!([]));
        let endpoint = testing::endpoint(&mock, 1);
        drop(mock);
        let provider = OpenAi::new(endpoint, IDLE_TIMEOUT);
        let (_, error) = testing::run(&provider, testing::request(testing::prompt("hi"))).await;
        let error = error.expect("an error");
        assert!(
            error.message.starts_with("cannot reach the model"),
            "{error}"
        );
        assert_eq!(error.status, None);
    }

    #[tokio::test]
    async fn dropping_the_request_stops_the_retries() {
        let mock = testing::mock(json!([
            { "status": 429, "headers": { "retry-after": "1" } },
            hello(),
        ]));
        let provider = OpenAi::new(testing::endpoint(&mock, 3), IDLE_TIMEOUT);
        let request = provider.stream(testing::request(testing::prompt("hi")));
        let waited = tokio::time::timeout(Duration::from_millis(300), request).await;
        assert!(waited.is_err(), "still waiting out the Retry-After");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(mock.requests().len(), 1, "no retry after the drop");
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        let wait = |pairs| retry_after(&headers(pairs), now);
        assert_eq!(wait(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(
            wait(&[("retry-after", "1.5")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            wait(&[("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT")]),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            wait(&[("retry-after", "Sun, 06 Nov 1994 08:49:00 GMT")]),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        assert_eq!(
            wait(&[("retry-after", "3"), ("retry-after-ms", "250")]),
            Some(Duration::from_millis(250)),
            "the finer header wins"
        );
        assert_eq!(wait(&[("retry-after", "soon")]), None);
        assert_eq!(wait(&[("retry-after", "-1")]), None);
        assert_eq!(wait(&[]), None);
    }

    #[test]
    fn server_waits_are_capped_and_backoff_grows_to_a_ceiling() {
        assert_eq!(delay(0, Some(Duration::from_secs(3600))), MAX_RETRY_AFTER);
        assert_eq!(
            delay(5, Some(Duration::from_secs(1))),
            Duration::from_secs(1)
        );
        for (retry, full) in [
            (0, 500),
            (1, 1000),
            (2, 2000),
            (3, 4000),
            (4, 8000),
            (30, 8000),
        ] {
            let wait = delay(retry, None);
            let full = Duration::from_millis(full);
            assert!(
                wait <= full && wait >= full.mul_f64(0.75),
                "{retry}: {wait:?}"
            );
        }
    }

    #[test]
    fn retryable_statuses() {
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(retryable_status(status), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422] {
            assert!(!retryable_status(status), "{status}");
        }
    }
}
