//! Server-sent events in, model events out: the loop both providers share. Each provider
//! supplies a [`Decode`] for its dialect; this file owns the idle timeout and the rule that a
//! stream which stops before the provider's own end marker is an error (the answer, or a tool
//! call's arguments, would be incomplete). The body's bytes become events in
//! `event_source.rs`; the idle timeout runs from one event to the next, so a server that only
//! sends comments still stalls.

use std::collections::VecDeque;
use std::time::Duration;

use futures::stream::{self, BoxStream, Stream, StreamExt};

use super::error::Failure;
use super::event_source::{Event, EventSource};
use super::{LlmError, StreamEvent};

/// Model events whose failures still say whether a retry may help (see `retry.rs`).
pub type RawEvents = BoxStream<'static, Result<StreamEvent, Failure>>;

/// Whether the stream continues after an SSE event.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    More,
    /// The provider's end marker (`[DONE]`, `message_stop`): the answer is complete.
    Done,
}

/// One provider's stream dialect.
pub trait Decode: Send + 'static {
    /// Decodes one SSE event, pushing the model events it completes onto `out`.
    fn event(&mut self, event: &Event, out: &mut VecDeque<StreamEvent>) -> Result<Flow, Failure>;

    /// The body ended without the end marker: flush what is complete, or fail.
    fn end(&mut self, out: &mut VecDeque<StreamEvent>) -> Result<(), Failure>;
}

/// The error for a stream that ended before the provider said it was complete.
pub fn incomplete() -> Failure {
    // A cut connection is worth retrying if nothing has been shown yet.
    Failure::retryable(LlmError::new(
        "the model stream ended before the response was complete",
    ))
}

/// `B` is the body's stream of reads.
struct Decoding<D, B> {
    body: B,
    source: EventSource,
    decoder: D,
    pending: VecDeque<StreamEvent>,
    done: bool,
    idle_timeout: Duration,
}

/// Decodes a streamed response body. Waiting longer than `idle_timeout` for the next SSE
/// event fails the stream.
pub fn decode<D: Decode>(
    response: reqwest::Response,
    decoder: D,
    idle_timeout: Duration,
) -> RawEvents {
    let decoding = Decoding {
        body: response.bytes_stream().boxed(),
        source: EventSource::default(),
        decoder,
        pending: VecDeque::new(),
        done: false,
        idle_timeout,
    };
    stream::unfold(decoding, |mut d| async move {
        loop {
            if let Some(event) = d.pending.pop_front() {
                return Some((Ok(event), d));
            }
            if d.done {
                return None;
            }
            if let Err(failure) = d.step().await {
                d.done = true;
                return Some((Err(failure), d));
            }
        }
    })
    .boxed()
}

impl<D, B, R> Decoding<D, B>
where
    D: Decode,
    B: Stream<Item = Result<R, reqwest::Error>> + Unpin,
    R: AsRef<[u8]>,
{
    /// Reads and decodes the next SSE event.
    async fn step(&mut self) -> Result<(), Failure> {
        match self.next_event().await? {
            None => {
                self.done = true;
                self.decoder.end(&mut self.pending)
            }
            Some(event) => {
                if self.decoder.event(&event, &mut self.pending)? == Flow::Done {
                    self.done = true;
                }
                Ok(())
            }
        }
    }

    /// The next SSE event, reading as much of the body as it takes; `None` at its end.
    async fn next_event(&mut self) -> Result<Option<Event>, Failure> {
        let deadline = tokio::time::Instant::now() + self.idle_timeout;
        loop {
            if let Some(event) = self
                .source
                .next_event()
                .map_err(|_| LlmError::new("the model stream is malformed: it is not UTF-8"))?
            {
                return Ok(Some(event));
            }
            let read = tokio::time::timeout_at(deadline, self.body.next())
                .await
                .map_err(|_| {
                    LlmError::new(format!(
                        "the model stream stalled for {:?}",
                        self.idle_timeout
                    ))
                })?;
            match read {
                None => return Ok(None),
                Some(Err(e)) => {
                    return Err(Failure::retryable(LlmError::new(format!(
                        "the model stream broke: {}",
                        crate::net::root_cause(&e)
                    ))));
                }
                Some(Ok(bytes)) => self.source.feed(bytes.as_ref()),
            }
        }
    }
}

/// Parses an event's JSON data.
pub fn json(event: &Event) -> Result<serde_json::Value, LlmError> {
    serde_json::from_str(&event.data)
        .map_err(|e| LlmError::new(format!("the model sent a malformed event: {e}")))
}

/// A tool call's arguments as the conversation keeps them: a tool without parameters may
/// stream none at all, which still means the empty object.
pub fn arguments(streamed: String) -> String {
    if streamed.trim().is_empty() {
        "{}".to_string()
    } else {
        streamed
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use crate::llm::StreamEvent;
    use crate::llm::anthropic::Anthropic;
    use crate::llm::openai::OpenAi;
    use crate::llm::testing;

    const SHORT: Duration = Duration::from_millis(300);

    #[tokio::test]
    async fn a_stall_past_the_idle_timeout_fails_the_stream() {
        let stalled =
            json!({ "events": [{ "text": "Hel" }, { "stallMs": 3000 }, { "text": "lo" }] });
        let mock = testing::mock(json!([stalled.clone(), stalled]));
        let openai = OpenAi::new(testing::endpoint(&mock, 3), SHORT);
        let anthropic = Anthropic::new(testing::endpoint(&mock, 3), SHORT);
        for provider in [&openai as &dyn crate::llm::Provider, &anthropic] {
            let (events, error) =
                testing::run(provider, testing::request(testing::prompt("hi"))).await;
            assert_eq!(events, [StreamEvent::Text("Hel".into())]);
            let error = error.expect("an error");
            assert!(error.message.contains("stalled for 300ms"), "{error}");
        }
        assert_eq!(mock.requests().len(), 2, "no retry once text streamed");
    }

    #[tokio::test]
    async fn no_answer_within_the_timeout_is_an_error() {
        let mock = testing::mock(json!([{ "delayMs": 3000, "events": [{ "text": "late" }] }]));
        let provider = OpenAi::new(testing::endpoint(&mock, 3), SHORT);
        let (_, error) = testing::run(&provider, testing::request(testing::prompt("hi"))).await;
        let error = error.expect("an error");
        assert!(
            error.message.contains("did not answer within 300ms"),
            "{error}"
        );
        assert_eq!(
            mock.requests().len(),
            1,
            "a silent server is not asked again"
        );
    }
}
