//! Bounding what a command prints, wherever it runs. Two bounds, because a command may print
//! a gigabyte: the output *kept* for the model and the log (head and tail, with a marker for
//! what was cut) and the live *stream* of deltas (forwarded up to a cap, then one marker —
//! the caller keeps draining the pipe so the process is never blocked on a full pipe). And
//! one line cut to a length (a server's last words on stderr; the tools' long lines).

use std::borrow::Cow;

use tokio::sync::mpsc::UnboundedSender;

/// The kept output: the first and the last bytes, `limit` in all.
pub struct KeptOutput {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    /// Grows to twice `tail_cap` before its front is dropped, so trimming is amortised.
    tail: Vec<u8>,
    omitted: u64,
}

impl KeptOutput {
    pub fn new(limit: usize) -> Self {
        let head_cap = limit / 2;
        KeptOutput {
            head_cap,
            tail_cap: limit - head_cap,
            head: Vec::new(),
            tail: Vec::new(),
            omitted: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < self.head_cap {
            let take = bytes.len().min(self.head_cap - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * self.tail_cap.max(1) {
            self.trim_tail();
        }
    }

    pub fn truncated(&self) -> bool {
        self.omitted > 0 || self.tail.len() > self.tail_cap
    }

    /// The kept text: lossy UTF-8, with `omitted_marker` between head and tail when cut.
    pub fn finish(mut self) -> String {
        self.trim_tail();
        if self.omitted == 0 {
            self.head.extend_from_slice(&self.tail);
            return String::from_utf8_lossy(&self.head).into_owned();
        }
        // Cut at character boundaries so the marker is not flanked by replacement characters.
        let head_end = complete_prefix_len(&self.head);
        let tail_start = self
            .tail
            .iter()
            .position(|b| !is_continuation(*b))
            .unwrap_or(self.tail.len());
        let omitted = self.omitted + (self.head.len() - head_end + tail_start) as u64;
        format!(
            "{}{}{}",
            String::from_utf8_lossy(&self.head[..head_end]),
            omitted_marker(omitted),
            String::from_utf8_lossy(&self.tail[tail_start..])
        )
    }

    fn trim_tail(&mut self) {
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
            self.omitted += excess as u64;
        }
    }
}

/// The marker that stands for bytes cut from the kept output.
pub fn omitted_marker(bytes: u64) -> String {
    format!("\n… [{bytes} bytes of output omitted] …\n")
}

/// Live output is forwarded up to this many times the kept output limit: a command printing
/// gigabytes must not flood the client, but a long build log should still stream.
pub const STREAM_CAP_FACTOR: usize = 4;

/// The live stream of output deltas, capped at `cap` bytes.
pub struct DeltaStream {
    tx: UnboundedSender<String>,
    cap: usize,
    sent: usize,
    stopped: bool,
}

impl DeltaStream {
    pub fn new(tx: UnboundedSender<String>, cap: usize) -> Self {
        DeltaStream {
            tx,
            cap,
            sent: 0,
            stopped: false,
        }
    }

    pub fn send(&mut self, delta: &str) {
        if self.stopped || delta.is_empty() {
            return;
        }
        let room = self.cap - self.sent;
        if delta.len() <= room {
            self.sent += delta.len();
            // A receiver that went away only means nobody is watching; the command goes on.
            let _ = self.tx.send(delta.to_owned());
            return;
        }
        let cut = floor_char_boundary(delta, room);
        let _ = self.tx.send(format!(
            "{}\n… [live output stops here after {} bytes; the end of the output is kept for the result] …\n",
            &delta[..cut],
            self.cap
        ));
        self.stopped = true;
    }
}

/// Turns a stream of byte chunks into UTF-8 text without splitting a character that
/// straddles two chunks (invalid bytes become U+FFFD).
#[derive(Default)]
pub struct Utf8Chunks {
    pending: Vec<u8>,
}

impl Utf8Chunks {
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let complete = complete_prefix_len(&self.pending);
        let rest = self.pending.split_off(complete);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        text
    }

    /// Whatever is left at the end of the stream.
    pub fn finish(self) -> String {
        String::from_utf8_lossy(&self.pending).into_owned()
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// The length of `bytes` without a trailing *incomplete* UTF-8 sequence (one that more bytes
/// could complete); invalid bytes are left in, for the lossy decoder to replace.
fn complete_prefix_len(bytes: &[u8]) -> usize {
    let floor = bytes.len().saturating_sub(4);
    let Some(start) = (floor..bytes.len())
        .rev()
        .find(|&i| !is_continuation(bytes[i]))
    else {
        return bytes.len();
    };
    match std::str::from_utf8(&bytes[start..]) {
        Err(e) if e.error_len().is_none() && e.valid_up_to() == 0 => start,
        _ => bytes.len(),
    }
}

/// `line` cut to `max` characters, with a note of how much was left out.
pub fn cut_line(line: &str, max: usize) -> Cow<'_, str> {
    match line.char_indices().nth(max) {
        None => Cow::Borrowed(line),
        Some((at, _)) => Cow::Owned(format!(
            "{}… [{} more characters]",
            &line[..at],
            line[at..].chars().count()
        )),
    }
}

/// The largest index `<= at` on a character boundary of `s`.
pub fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_output_under_the_limit_is_whole() {
        let mut kept = KeptOutput::new(10);
        kept.push(b"hello");
        kept.push(b" you");
        assert!(!kept.truncated());
        assert_eq!(kept.finish(), "hello you");
    }

    #[test]
    fn kept_output_keeps_head_and_tail_with_a_marker() {
        let mut kept = KeptOutput::new(10);
        for chunk in [b"01234".as_slice(), b"abcdefghij", b"vwxyz"] {
            kept.push(chunk);
        }
        assert!(kept.truncated());
        assert_eq!(kept.finish(), format!("01234{}vwxyz", omitted_marker(10)));
    }

    #[test]
    fn kept_output_cuts_at_character_boundaries() {
        let mut kept = KeptOutput::new(6);
        kept.push("aéé—zz😀xy".as_bytes());
        let text = kept.finish();
        assert!(!text.contains('\u{FFFD}'), "{text:?}");
        assert!(text.starts_with("aé") && text.ends_with("xy"), "{text:?}");
    }

    #[test]
    fn kept_output_stays_bounded_over_many_chunks() {
        let mut kept = KeptOutput::new(100);
        for _ in 0..10_000 {
            kept.push(&[b'y'; 1000]);
            assert!(kept.head.len() + kept.tail.len() <= 300);
        }
        assert!(kept.finish().contains("9999900 bytes of output omitted"));
    }

    #[test]
    fn utf8_chunks_join_split_characters() {
        let mut decoder = Utf8Chunks::default();
        let bytes = "ü😀".as_bytes();
        let mut text = String::new();
        for b in bytes {
            text.push_str(&decoder.decode(&[*b]));
        }
        text.push_str(&decoder.finish());
        assert_eq!(text, "ü😀");
    }

    #[test]
    fn utf8_chunks_replace_invalid_bytes() {
        let mut decoder = Utf8Chunks::default();
        assert_eq!(decoder.decode(b"a\xffb"), "a\u{FFFD}b");
        assert_eq!(decoder.decode(b"\xe2\x82"), "");
        assert_eq!(decoder.finish(), "\u{FFFD}");
    }

    #[test]
    fn delta_stream_stops_at_its_cap_with_one_marker() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut stream = DeltaStream::new(tx, 8);
        stream.send("hello");
        stream.send("world");
        stream.send("more");
        drop(stream);
        assert_eq!(rx.try_recv().unwrap(), "hello");
        let last = rx.try_recv().unwrap();
        assert!(last.starts_with("wor\n… [live output stops here"), "{last}");
        assert!(rx.try_recv().is_err());
    }
}
