//! Server-sent events in, model events out: the loop both providers share. Each provider
//! supplies a [`Decode`] for its dialect; this file owns the idle timeout and the rule that a
//! stream which stops before the provider's own end marker is an error (the answer, or a tool
//! call's arguments, would be incomplete). The body's bytes become events in
//! `eventsource-stream`, fed one line at a time ([`events`], `sse_lines.rs`); the idle timeout
//! runs from one event to the next, so a server that only sends comments still stalls.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::stream::{self, BoxStream, Stream, StreamExt, TryStreamExt};
use tokio::time::{Instant, Sleep};

use super::error::Failure;
use super::sse_lines::Lines;
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
pub trait Decode: Send + Unpin + 'static {
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

/// A body's server-sent events: its reads cut into lines (`sse_lines.rs`, which says why), then
/// parsed by `eventsource-stream`.
pub fn events<S, E>(body: S) -> impl Stream<Item = Result<Event, EventStreamError<E>>>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    let mut lines = Lines::default();
    body.map_ok(move |read| stream::iter(lines.cut(read).map(Ok)))
        .try_flatten()
        .eventsource()
}

/// The wait for a timeout too long to add to now (`streamIdleTimeoutSecs` is any `u64`): about
/// 30 years, as `tokio::time::timeout` waits then.
const NEVER: Duration = Duration::from_secs(86_400 * 365 * 30);

/// How long the rest of a complete answer's body is waited for (`Decoding::poll_rest`): it is
/// the last chunk's few bytes, sent with the end marker or right after it.
const REST_GRACE: Duration = Duration::from_millis(100);

type Sse = BoxStream<'static, Result<Event, EventStreamError<reqwest::Error>>>;

/// A body's SSE events being decoded into model events. A `Stream` of its own rather than a
/// loop of futures: a fast model sends hundreds of events per read, and each went through
/// building a future and a timeout, which cost more than the `Decode` of a text delta.
struct Decoding<D> {
    sse: Sse,
    decoder: D,
    pending: VecDeque<StreamEvent>,
    done: bool,
    /// The provider's end marker came (the body may still hold its last bytes).
    complete: bool,
    idle_timeout: Duration,
    /// Fires when the wait for the next event has lasted `idle_timeout` (or, after the end
    /// marker, for the rest of the body, `REST_GRACE`). Armed only when an event is not there
    /// at once (the wait starts then): events already read cost no timer.
    stall: Pin<Box<Sleep>>,
    /// The timer is armed for the current wait.
    waiting: bool,
}

/// Decodes a streamed response body. Waiting longer than `idle_timeout` for the next SSE
/// event fails the stream.
pub fn decode<D: Decode>(
    response: reqwest::Response,
    decoder: D,
    idle_timeout: Duration,
) -> RawEvents {
    decoding(
        events(response.bytes_stream()).boxed(),
        decoder,
        idle_timeout,
    )
}

fn decoding<D: Decode>(sse: Sse, decoder: D, idle_timeout: Duration) -> RawEvents {
    Decoding {
        sse,
        decoder,
        pending: VecDeque::new(),
        done: false,
        complete: false,
        idle_timeout,
        stall: Box::pin(tokio::time::sleep(Duration::ZERO)),
        waiting: false,
    }
    .boxed()
}

impl<D: Decode> Stream for Decoding<D> {
    type Item = Result<StreamEvent, Failure>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(event) = this.pending.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            if this.done {
                return this.poll_rest(cx);
            }
            let next = match this.sse.poll_next_unpin(cx) {
                Poll::Ready(next) => next,
                Poll::Pending => return this.poll_stall(cx),
            };
            this.waiting = false;
            if let Err(failure) = this.step(next) {
                this.done = true;
                return Poll::Ready(Some(Err(failure)));
            }
        }
    }
}

impl<D: Decode> Decoding<D> {
    /// Decodes what the SSE stream gave next: an event, its end, or its failure.
    fn step(
        &mut self,
        next: Option<Result<Event, EventStreamError<reqwest::Error>>>,
    ) -> Result<(), Failure> {
        match next {
            None => {
                self.done = true;
                self.decoder.end(&mut self.pending)
            }
            Some(Err(EventStreamError::Transport(e))) => Err(Failure::retryable(LlmError::new(
                format!("the model stream broke: {}", crate::net::root_cause(&e)),
            ))),
            Some(Err(e)) => {
                Err(LlmError::new(format!("the model stream is malformed: {e}")).into())
            }
            Some(Ok(event)) => {
                if self.decoder.event(&event, &mut self.pending)? == Flow::Done {
                    self.done = true;
                    self.complete = true;
                }
                Ok(())
            }
        }
    }

    /// Ends the stream — after the provider's end marker, once the body is read to its end:
    /// an HTTP/1.1 connection whose response was not read to its last chunk is closed rather
    /// than pooled, and the next request would connect (with TLS, handshake) again. What
    /// follows the marker is not the model's; a body still open after `REST_GRACE` is let go.
    fn poll_rest(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<StreamEvent, Failure>>> {
        if !self.complete {
            return Poll::Ready(None);
        }
        // The event that ended the wait for the marker disarmed the idle timer.
        if !std::mem::replace(&mut self.waiting, true) {
            let deadline = Instant::now() + REST_GRACE;
            self.stall.as_mut().reset(deadline);
        }
        loop {
            match self.sse.poll_next_unpin(cx) {
                Poll::Ready(Some(_)) => continue,
                Poll::Ready(None) => break,
                Poll::Pending if self.stall.as_mut().poll(cx).is_pending() => {
                    return Poll::Pending;
                }
                Poll::Pending => break,
            }
        }
        self.complete = false;
        Poll::Ready(None)
    }

    /// The next event is not there yet: starts the idle timer if this wait just began, and
    /// fails the stream once it fires.
    fn poll_stall(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<StreamEvent, Failure>>> {
        if !self.waiting {
            self.waiting = true;
            let now = Instant::now();
            let deadline = now.checked_add(self.idle_timeout).unwrap_or(now + NEVER);
            self.stall.as_mut().reset(deadline);
        }
        if self.stall.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.done = true;
        let stalled = LlmError::new(format!(
            "the model stream stalled for {:?}",
            self.idle_timeout
        ));
        Poll::Ready(Some(Err(stalled.into())))
    }
}

/// A string field of a streamed event, borrowed from the event's text unless it holds escapes:
/// a token's text costs no allocation to parse. serde's derive borrows a `Cow<str>` field only
/// when the field is one, not inside an `Option`, hence this newtype for optional text.
#[derive(serde::Deserialize, Default)]
pub struct Text<'a>(#[serde(borrow)] pub Cow<'a, str>);

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

    use bytes::Bytes;
    use futures::{StreamExt, TryStreamExt};
    use serde_json::json;

    use crate::llm::StreamEvent;
    use crate::llm::anthropic::Anthropic;
    use crate::llm::openai::OpenAi;
    use crate::llm::testing;

    const SHORT: Duration = Duration::from_millis(300);

    /// The events `events` makes of a body read in these pieces, as (type, data).
    fn parsed(reads: &[&[u8]]) -> Result<Vec<(String, String)>, String> {
        let body = futures::stream::iter(
            reads
                .iter()
                .map(|read| Ok::<_, std::io::Error>(Bytes::copy_from_slice(read)))
                .collect::<Vec<_>>(),
        );
        futures::executor::block_on(super::events(body).try_collect::<Vec<_>>())
            .map(|events| events.into_iter().map(|e| (e.event, e.data)).collect())
            .map_err(|e| e.to_string())
    }

    fn event(kind: &str, data: &str) -> (String, String) {
        (kind.into(), data.into())
    }

    #[test]
    fn events_end_at_an_empty_line_whatever_the_line_ends_and_wherever_a_read_ends() {
        let stream =
            b"data: a\n\nevent: ping\ndata: b\r\n\r\ndata:c\rdata: d\r\r: comment\nid: 7\n\n";
        let expected = [
            event("message", "a"),
            event("ping", "b"),
            event("message", "c\nd"),
        ];
        assert_eq!(parsed(&[stream]), Ok(expected.to_vec()));
        // The same bytes cut anywhere, a CR LF split between reads included.
        for cut in 1..stream.len() {
            let (head, tail) = stream.split_at(cut);
            assert_eq!(parsed(&[head, tail]), Ok(expected.to_vec()), "cut at {cut}");
        }
        // And one byte per read.
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(parsed(&bytes), Ok(expected.to_vec()));
    }

    #[test]
    fn a_bom_however_split_is_dropped_and_an_event_without_data_is_not_dispatched() {
        let stream = b"\xEF\xBB\xBFdata: x\n\nevent: empty\n\ndata\n\n";
        let expected = Ok(vec![event("message", "x"), event("message", "")]);
        for cut in 1..stream.len() {
            let (head, tail) = stream.split_at(cut);
            assert_eq!(parsed(&[head, tail]), expected, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(parsed(&bytes), expected);
        // Bytes that began like a BOM and were not one still reach the parser.
        assert!(parsed(&[b"\xEF\xBB", b"data: x\n\n"]).is_err());
    }

    #[test]
    fn an_unfinished_event_is_dropped_and_bytes_not_utf8_are_an_error() {
        assert_eq!(parsed(&[b"data: never ended\n"]), Ok(vec![]));
        let error = parsed(&[b"data: \xFF\n\n"]).unwrap_err();
        assert!(error.contains("UTF8"), "{error}");
    }

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
    async fn the_idle_timeout_runs_from_each_event_not_from_the_start() {
        // 2 × 200 ms of silence, each within the 300 ms timeout, 400 ms in all.
        let paused = json!({ "events": [
            { "text": "a" }, { "stallMs": 200 }, { "text": "b" }, { "stallMs": 200 }, { "text": "c" },
        ] });
        let mock = testing::mock(json!([paused]));
        let provider = OpenAi::new(testing::endpoint(&mock, 0), SHORT);
        let (events, error) =
            testing::run(&provider, testing::request(testing::prompt("hi"))).await;
        assert_eq!(error, None);
        let texts: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["a", "b", "c"]);
    }

    #[tokio::test]
    async fn every_delta_of_a_read_holding_many_comes_out_in_order() {
        let texts: Vec<String> = (0..500).map(|i| format!("{i} ")).collect();
        let events: Vec<_> = texts.iter().map(|text| json!({ "text": text })).collect();
        let mock = testing::mock(json!([{ "events": events }, { "events": events }]));
        let openai = OpenAi::new(testing::endpoint(&mock, 0), SHORT);
        let anthropic = Anthropic::new(testing::endpoint(&mock, 0), SHORT);
        for provider in [&openai as &dyn crate::llm::Provider, &anthropic] {
            let (events, error) =
                testing::run(provider, testing::request(testing::prompt("hi"))).await;
            assert_eq!(error, None);
            let streamed: Vec<_> = events
                .into_iter()
                .filter(|e| matches!(e, StreamEvent::Text(_)))
                .collect();
            let expected: Vec<_> = texts.iter().cloned().map(StreamEvent::Text).collect();
            assert_eq!(streamed, expected);
        }
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

    /// A dialect of its own: each event's data is a text delta, `[DONE]` its end marker.
    struct Marked;

    impl super::Decode for Marked {
        fn event(
            &mut self,
            event: &eventsource_stream::Event,
            out: &mut std::collections::VecDeque<StreamEvent>,
        ) -> Result<super::Flow, super::Failure> {
            if event.data == "[DONE]" {
                return Ok(super::Flow::Done);
            }
            out.push_back(StreamEvent::Text(event.data.clone()));
            Ok(super::Flow::More)
        }

        fn end(
            &mut self,
            _: &mut std::collections::VecDeque<StreamEvent>,
        ) -> Result<(), super::Failure> {
            Err(super::incomplete())
        }
    }

    type Reads = futures::stream::BoxStream<'static, Result<Bytes, reqwest::Error>>;

    fn decoded(body: Reads) -> super::RawEvents {
        super::decoding(
            super::events(body).boxed(),
            Marked,
            Duration::from_secs(600),
        )
    }

    fn read(text: &'static str) -> Result<Bytes, reqwest::Error> {
        Ok(Bytes::from_static(text.as_bytes()))
    }

    /// After the end marker the stream ends only once the body has (what follows the marker
    /// is read and dropped), so that the connection can be pooled.
    #[tokio::test]
    async fn the_body_is_read_to_its_end_after_the_end_marker() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let ended = Arc::new(AtomicBool::new(false));
        let seen = ended.clone();
        let rest = futures::stream::poll_fn(move |_| {
            seen.store(true, Ordering::SeqCst);
            std::task::Poll::Ready(None)
        });
        let reads = [
            read("data: hi\n\ndata: [DONE]\n\n"),
            read("data: after\n\n"),
        ];
        let body = futures::stream::iter(reads).chain(rest).boxed();
        let events: Vec<_> = decoded(body).try_collect().await.unwrap();
        assert!(
            matches!(&events[..], [StreamEvent::Text(t)] if t == "hi"),
            "{events:?}"
        );
        assert!(ended.load(Ordering::SeqCst), "read to its end");
    }

    /// A body left open after the end marker ends the stream all the same, a moment later,
    /// without an error: the answer was complete.
    #[tokio::test]
    async fn a_body_left_open_after_the_end_marker_is_let_go() {
        let reads = [read("data: hi\n\ndata: [DONE]\n\n")];
        let body = futures::stream::iter(reads)
            .chain(futures::stream::pending())
            .boxed();
        let started = std::time::Instant::now();
        let events: Vec<_> = decoded(body).try_collect().await.unwrap();
        assert_eq!(events.len(), 1);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }
}
