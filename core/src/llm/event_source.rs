//! The server-sent events format (WHATWG HTML, "Interpreting an event stream"): body bytes in,
//! events out. The engine's own because a model streams thousands of small events, often many
//! in one read: this parser keeps its place in the buffered bytes and drops what it consumed
//! once per read, where `eventsource-stream` copied the rest of its buffer after every line
//! (most of a streamed token's cost once reads grew large). Fields other than `event` and
//! `data` are of no use to a model stream and are skipped.

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    /// The event type (`message` when the stream named none).
    pub event: String,
    pub data: String,
}

/// Bytes that are not UTF-8 where a line was expected.
#[derive(Debug, PartialEq, Eq)]
pub struct NotUtf8;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The parser's state between reads.
#[derive(Default)]
pub struct EventSource {
    buffer: Vec<u8>,
    /// How much of `buffer` has been parsed.
    consumed: usize,
    /// Whether the stream's first bytes were seen (a leading BOM is dropped).
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl EventSource {
    /// Takes the next bytes of the body.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.consumed > 0 {
            self.buffer.drain(..self.consumed);
            self.consumed = 0;
        }
        self.buffer.extend_from_slice(bytes);
        if !self.started && (self.buffer.len() >= BOM.len() || !BOM.starts_with(&self.buffer)) {
            self.started = true;
            if self.buffer.starts_with(BOM) {
                self.buffer.drain(..BOM.len());
            }
        }
    }

    /// The next complete event in what was fed, if there is one.
    pub fn next_event(&mut self) -> Result<Option<Event>, NotUtf8> {
        if !self.started {
            return Ok(None); // the first bytes may still turn out to be a BOM
        }
        while let Some((line, next)) = self.next_line() {
            self.consumed = next;
            if let Some(event) = self.take_line(line)? {
                return Ok(Some(event));
            }
        }
        Ok(None)
    }

    /// The range of the next whole line and where the one after it starts. A CR at the end
    /// of the buffer waits for the next read, which may begin with its LF.
    fn next_line(&self) -> Option<(std::ops::Range<usize>, usize)> {
        let rest = &self.buffer[self.consumed..];
        let end = memchr::memchr2(b'\n', b'\r', rest)?;
        let after = match (rest[end], rest.get(end + 1)) {
            (b'\r', Some(b'\n')) => end + 2,
            (b'\r', None) => return None,
            _ => end + 1,
        };
        Some((self.consumed..self.consumed + end, self.consumed + after))
    }

    fn take_line(&mut self, line: std::ops::Range<usize>) -> Result<Option<Event>, NotUtf8> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        let line = std::str::from_utf8(&self.buffer[line]).map_err(|_| NotUtf8)?;
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            // A comment (empty field name), `id`, `retry` or a field the format ignores.
            _ => {}
        }
        Ok(None)
    }

    /// An empty line ends an event: dispatched if it had data, else dropped.
    fn dispatch(&mut self) -> Option<Event> {
        let event = std::mem::take(&mut self.event);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(Event {
            event: if event.is_empty() {
                "message".to_string()
            } else {
                event
            },
            data: std::mem::take(&mut self.data),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<Event> {
        let mut source = EventSource::default();
        let mut out = Vec::new();
        for chunk in chunks {
            source.feed(chunk);
            while let Some(event) = source.next_event().unwrap() {
                out.push(event);
            }
        }
        out
    }

    fn event(kind: &str, data: &str) -> Event {
        Event {
            event: kind.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_end_at_an_empty_line_whatever_the_line_ends() {
        let stream =
            b"data: a\n\nevent: ping\ndata: b\r\n\r\ndata:c\rdata: d\r\r: comment\nid: 7\n\n";
        let expected = [
            event("message", "a"),
            event("ping", "b"),
            event("message", "c\nd"),
        ];
        assert_eq!(events(&[stream]), expected);
        // The same bytes cut anywhere, a CRLF split between reads included.
        for cut in 1..stream.len() {
            let (head, tail) = stream.split_at(cut);
            assert_eq!(events(&[head, tail]), expected, "cut at {cut}");
        }
    }

    #[test]
    fn a_bom_is_dropped_and_an_event_without_data_is_not_dispatched() {
        let stream = b"\xEF\xBB\xBFdata: x\n\nevent: empty\n\ndata\n\n";
        assert_eq!(
            events(&[&stream[..2], &stream[2..]]),
            [event("message", "x"), event("message", "")]
        );
    }

    #[test]
    fn an_unfinished_event_waits_and_bad_bytes_are_an_error() {
        assert_eq!(events(&[b"data: never ended\n"]), []);
        let mut source = EventSource::default();
        source.feed(b"data: \xFF\n\n");
        assert_eq!(source.next_event(), Err(NotUtf8));
    }
}
