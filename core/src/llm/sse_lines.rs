//! A response body's reads cut the way `eventsource-stream` (0.2) needs them: one line per
//! piece, and no byte order mark in front.
//!
//! Lines, because its `EventStream` appends each read to a buffer and, after every line it
//! parses, moves the rest of that buffer into a new string. A fast model sends hundreds of
//! events in one read, so a whole read cost events × read bytes. Given one line at a time, what
//! it moves is at most the line's own unfinished tail: an event costs its own bytes. The pieces
//! are slices of the read (`Bytes` shares its memory), so cutting copies nothing.
//!
//! No BOM, because it drops a leading one by slicing its first string at byte 1, inside the
//! 3-byte mark: a panic. The mark is dropped here instead, even when it spans reads.

use bytes::Bytes;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Where the body is: whether its first bytes have shown if it opens with a BOM.
#[derive(Default)]
pub struct Lines {
    /// How many of the BOM's bytes the body has begun with so far.
    matched: usize,
    started: bool,
}

impl Lines {
    /// The next read, cut after each line end (LF, CR LF, or a lone CR). The last piece may
    /// be part of a line the next read finishes; a CR ending the read ends its piece, and
    /// `eventsource-stream` waits for the next read to tell CR from CR LF.
    pub fn cut(&mut self, read: Bytes) -> impl Iterator<Item = Bytes> + use<> {
        let (held, mut rest) = self.without_bom(read);
        let lines = std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let end = match memchr::memchr2(b'\n', b'\r', &rest) {
                Some(at) if rest[at..].starts_with(b"\r\n") => at + 2,
                Some(at) => at + 1,
                None => rest.len(),
            };
            Some(rest.split_to(end))
        });
        held.into_iter().chain(lines)
    }

    /// `read` less what begins the body's BOM. Bytes held back because they might have begun
    /// one are given back, first, once the body shows they did not.
    fn without_bom(&mut self, read: Bytes) -> (Option<Bytes>, Bytes) {
        if self.started {
            return (None, read);
        }
        let expected = &BOM[self.matched..];
        let seen = expected.len().min(read.len());
        if read[..seen] == expected[..seen] {
            self.matched += seen;
            self.started = self.matched == BOM.len();
            return (None, read.slice(seen..));
        }
        self.started = true;
        let held = (self.matched > 0).then(|| Bytes::from_static(&BOM[..self.matched]));
        (held, read)
    }
}
