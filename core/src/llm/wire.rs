//! Messages as a provider encodes them, kept between the requests of a session. A session's
//! requests only ever append (until a compaction rewrites its context, which starts a new
//! cache), so each request encodes just the messages added since the previous one, and its
//! body shares the encoded text with the cache instead of copying it (`body.rs`): the text is
//! kept in a few pieces of shared bytes, which each request's body lists (the step at ~100
//! and ~3,000 messages: `benches/README.md`).

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;

use super::body::Body;
use crate::chat::Message;
use crate::config::ProviderName;

/// The role a message's parts go under: Anthropic's turns; OpenAI's parts name their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Own,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Own => "",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One message as its provider encodes it: the JSON texts of its wire messages (OpenAI) or
/// content blocks (Anthropic), in order, and the role they go under.
pub struct Encoded {
    pub role: Role,
    pub parts: Vec<String>,
}

/// The encodings of a session's messages, kept as one text: every part of every message in
/// order, separated by commas — for OpenAI, the request's `messages` array as it is sent
/// (but the system message). The text up to the last request is in pieces of shared bytes
/// that request bodies hold rather than copy; what the cache keeps besides the text is a few
/// bytes a part and a message.
#[derive(Default)]
pub struct WireCache {
    /// Whose encoding this is (a session may switch between providers).
    dialect: Option<ProviderName>,
    /// The text up to the last request (`seal`).
    sealed: Vec<Bytes>,
    /// The bytes in `sealed`.
    sealed_len: usize,
    /// The text encoded since.
    open: String,
    /// Where each part ends in the text.
    part_ends: Vec<u32>,
    /// Each message's role and its first part's index in `part_ends`.
    messages: Vec<(Role, u32)>,
}

impl std::fmt::Debug for WireCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "WireCache({:?}: {} messages)",
            self.dialect,
            self.messages.len()
        )
    }
}

/// An offset into the text: a context's text stays far below 4 GiB (models' windows are a
/// few MB of text), and the offsets are most of what the cache keeps besides it.
fn offset(position: usize) -> u32 {
    u32::try_from(position).expect("an encoded context under 4 GiB")
}

impl WireCache {
    fn push(&mut self, encoded: Encoded) {
        self.messages
            .push((encoded.role, offset(self.part_ends.len())));
        for part in encoded.parts {
            if self.len() > 0 {
                self.open.push(',');
            }
            self.open.push_str(&part);
            self.part_ends.push(offset(self.len()));
        }
    }

    fn len(&self) -> usize {
        self.sealed_len + self.open.len()
    }

    /// Makes what was encoded since the last request a piece of its own, merged with the
    /// newest pieces for as long as the one before is not over twice the size of what is
    /// being merged: the pieces shrink geometrically, so a body lists a few dozen at most,
    /// and a byte is copied about once each time the text grows by half — never the whole
    /// text per request.
    fn seal(&mut self) {
        if self.open.is_empty() {
            return;
        }
        let newest = std::mem::take(&mut self.open);
        let mut size = newest.len();
        let mut first = self.sealed.len();
        while first > 0 && self.sealed[first - 1].len() <= 2 * size {
            first -= 1;
            size += self.sealed[first].len();
        }
        let mut merged = Vec::with_capacity(size);
        for piece in self.sealed.drain(first..) {
            merged.extend_from_slice(&piece);
        }
        merged.extend_from_slice(newest.as_bytes());
        self.sealed_len += newest.len();
        self.sealed.push(Bytes::from(merged));
    }

    /// Forgets the messages from `from` on.
    fn truncate(&mut self, from: usize) {
        let Some(&(_, first)) = self.messages.get(from) else {
            return;
        };
        self.messages.truncate(from);
        self.part_ends.truncate(first as usize);
        let end = self.part_ends.last().map_or(0, |&end| end as usize);
        if end >= self.sealed_len {
            self.open.truncate(end - self.sealed_len);
            return;
        }
        self.open.clear();
        let (mut start, mut kept) = (0, 0);
        for piece in &mut self.sealed {
            if start >= end {
                break;
            }
            let len = piece.len();
            piece.truncate(end - start);
            start += len;
            kept += 1;
        }
        self.sealed.truncate(kept);
        self.sealed_len = end;
    }

    /// The whole text, in pieces: every part, in order, joined by commas (sealed: see
    /// `with_encoded`).
    pub fn pieces(&self) -> &[Bytes] {
        debug_assert!(self.open.is_empty(), "sealed before a request reads it");
        &self.sealed
    }

    /// Each message's role and its parts, in order.
    pub fn messages(&self) -> impl Iterator<Item = (Role, Vec<&str>)> {
        let firsts = self.messages.iter().map(|&(_, first)| first as usize);
        let ends = firsts.skip(1).chain(std::iter::once(self.part_ends.len()));
        let mut pieces = Pieces::new(&self.sealed);
        self.messages
            .iter()
            .zip(ends)
            .map(move |(&(role, first), end)| {
                let first = first as usize;
                let parts = (first..end).map(|i| {
                    let start = match i {
                        0 => 0,
                        _ => self.part_ends[i - 1] as usize + 1,
                    };
                    pieces.text(start, self.part_ends[i] as usize)
                });
                (role, parts.collect())
            })
    }
}

/// A walk through the sealed text in order (a part never spans two pieces).
struct Pieces<'a> {
    pieces: &'a [Bytes],
    /// The piece the walk is in, and where it starts in the text.
    at: usize,
    start: usize,
}

impl<'a> Pieces<'a> {
    fn new(pieces: &'a [Bytes]) -> Self {
        Pieces {
            pieces,
            at: 0,
            start: 0,
        }
    }

    /// The text from `start` to `end`, at or after the previous one asked.
    fn text(&mut self, start: usize, end: usize) -> &'a str {
        while start >= self.start + self.pieces[self.at].len() {
            self.start += self.pieces[self.at].len();
            self.at += 1;
        }
        let piece = &self.pieces[self.at];
        // Sealed from a `String`, cut at part boundaries: always UTF-8.
        std::str::from_utf8(&piece[start - self.start..end - self.start])
            .expect("the wire's text is UTF-8")
    }
}

/// A session's cache, shared by its requests.
pub type SharedWire = Arc<Mutex<WireCache>>;

/// Runs `assemble` on the encoding of a context whose first `earlier` messages the cache
/// holds already (their values are kept nowhere else in memory) and whose next ones are
/// `messages`, encoding only those the cache has not seen; `assemble` gets the text sealed
/// (`WireCache::pieces`). The context must extend what the cache was filled from (the
/// session starts a new cache whenever its context is rewritten); with `earlier` messages,
/// the cache must hold them in `dialect` (`agent/request.rs` brings them back from the log
/// otherwise).
pub fn with_encoded<R>(
    wire: &SharedWire,
    dialect: ProviderName,
    (earlier, messages): (usize, &[Message]),
    encode: impl Fn(&Message) -> Encoded,
    assemble: impl FnOnce(&WireCache) -> R,
) -> R {
    let mut cache = wire.lock().unwrap_or_else(|p| p.into_inner());
    let known = cache.messages.len();
    if cache.dialect != Some(dialect) || known > earlier + messages.len() {
        assert_eq!(earlier, 0, "a context encoded anew must be whole");
        *cache = WireCache {
            dialect: Some(dialect),
            ..WireCache::default()
        };
    }
    let known = cache.messages.len();
    assert!(
        known >= earlier,
        "the cache must hold what the context let go of"
    );
    for message in &messages[known - earlier..] {
        cache.push(encode(message));
    }
    cache.seal();
    assemble(&cache)
}

/// How many messages the cache holds the encoding of, and for which provider.
pub fn encoded(wire: &SharedWire) -> (Option<ProviderName>, usize) {
    let cache = wire.lock().unwrap_or_else(|p| p.into_inner());
    (cache.dialect, cache.messages.len())
}

/// Drops the encodings of the messages from `from` on: they changed (a prompt's next block
/// joined its message).
pub fn forget(wire: &SharedWire, from: usize) {
    let mut cache = wire.lock().unwrap_or_else(|p| p.into_inner());
    cache.truncate(from);
}

/// The body: the JSON text of the object `head` with `"messages": [items…]` appended as its
/// last member — the same bytes serializing the whole body as one value gives. Each run is
/// one or more items already joined by commas, in pieces (the wire's text is many items); an
/// empty run stands for nothing.
pub fn body_with_messages(head: &Value, runs: Vec<Vec<Bytes>>) -> Body {
    let head = head.to_string();
    let mut opening = head[..head.len() - 1].to_string();
    opening.push_str(if head.len() > 2 {
        ",\"messages\":["
    } else {
        "\"messages\":["
    });
    let mut body = Body::from(opening);
    let runs = runs
        .into_iter()
        .filter(|run| run.iter().any(|p| !p.is_empty()));
    for (i, run) in runs.enumerate() {
        if i > 0 {
            body.push(Bytes::from_static(b","));
        }
        run.into_iter().for_each(|piece| body.push(piece));
    }
    body.push(Bytes::from_static(b"]}"));
    body
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::UserPart;

    fn joined(cache: &WireCache) -> String {
        String::from_utf8(cache.pieces().concat()).unwrap()
    }

    fn user(m: &Message) -> Encoded {
        Encoded {
            role: Role::User,
            parts: match m {
                Message::User { content } => content
                    .iter()
                    .map(|p| match p {
                        UserPart::Text { text } => json!(text).to_string(),
                        UserPart::Image(_) => unreachable!(),
                    })
                    .collect(),
                _ => Vec::new(),
            },
        }
    }

    #[test]
    fn the_body_is_what_serializing_it_whole_gives() {
        let head = json!({"model": "m", "stream": true});
        let messages = [
            json!({"role": "system", "content": "s"}),
            json!({"role": "user", "content": "a"}),
            json!({"role": "assistant", "content": "b"}),
        ];
        let texts: Vec<String> = messages.iter().map(Value::to_string).collect();
        let mut whole = head.clone();
        whole["messages"] = Value::Array(messages.to_vec());
        // The system message, then the wire's text in two pieces.
        let piece = |text: String| Bytes::from(text);
        let runs = vec![
            vec![piece(texts[0].clone())],
            vec![piece(format!("{},", texts[1])), piece(texts[2].clone())],
        ];
        assert_eq!(body_with_messages(&head, runs).text(), whole.to_string());
        let empty = body_with_messages(&json!({}), vec![vec![], vec![Bytes::new()]]);
        assert_eq!(empty.text(), r#"{"messages":[]}"#);
    }

    #[test]
    fn only_new_messages_are_encoded() {
        let wire = SharedWire::default();
        let encodings = std::cell::Cell::new(0);
        let encode = |m: &Message| {
            encodings.set(encodings.get() + 1);
            user(m)
        };
        let mut messages = vec![Message::user_text("one")];
        let count = |e: &WireCache| e.messages().count();
        let (a, b) = (ProviderName::Openai, ProviderName::Anthropic);
        assert_eq!(with_encoded(&wire, a, (0, &messages), encode, count), 1);
        messages.push(Message::user_text("two"));
        assert_eq!(with_encoded(&wire, a, (0, &messages), encode, count), 2);
        assert_eq!(encodings.get(), 2);
        // A context that let go of its encoded messages sends only what follows them.
        messages.push(Message::user_text("three"));
        assert_eq!(
            with_encoded(&wire, a, (2, &messages[2..]), encode, count),
            3
        );
        assert_eq!(encodings.get(), 3);
        // Another provider's request encodes all again.
        assert_eq!(with_encoded(&wire, b, (0, &messages), encode, count), 3);
        assert_eq!(encodings.get(), 6);
    }

    #[test]
    fn the_parts_are_kept_joined_and_forgetting_cuts_them() {
        let wire = SharedWire::default();
        let two_blocks = Message::User {
            content: vec![
                UserPart::Text { text: "b".into() },
                UserPart::Text { text: "c".into() },
            ],
        };
        let messages = vec![Message::user_text("a"), two_blocks, Message::user_text("d")];
        let parts = |e: &WireCache| {
            (
                joined(e),
                e.messages().map(|(_, p)| p.len()).collect::<Vec<_>>(),
            )
        };
        let a = ProviderName::Openai;
        let (text, counts) = with_encoded(&wire, a, (0, &messages), user, parts);
        let block = |t: &str| json!(t).to_string();
        assert_eq!(
            text,
            [block("a"), block("b"), block("c"), block("d")].join(",")
        );
        assert_eq!(counts, [1, 2, 1]);
        forget(&wire, 1);
        let (text, counts) = with_encoded(&wire, a, (0, &messages[..1]), user, parts);
        assert_eq!((text, counts), (block("a"), vec![1]));
    }

    /// A request per message: the text stays in a few pieces, each over twice the size of
    /// the next, and reads back whole, part by part, and cut anywhere.
    #[test]
    fn the_text_stays_in_few_pieces_that_read_back_whole() {
        let wire = SharedWire::default();
        let a = ProviderName::Openai;
        let messages: Vec<Message> = (0..1000)
            .map(|i| Message::user_text(format!("message {i}")))
            .collect();
        let pieces = |e: &WireCache| e.pieces().iter().map(Bytes::len).collect::<Vec<_>>();
        for n in 1..=messages.len() {
            let sizes = with_encoded(&wire, a, (0, &messages[..n]), user, pieces);
            assert!(sizes.windows(2).all(|w| w[0] > 2 * w[1]), "{sizes:?}");
            assert!(sizes.len() <= 10, "{n}: {sizes:?}");
        }
        let texts: Vec<String> = messages.iter().flat_map(|m| user(m).parts).collect();
        let read = |e: &WireCache| {
            let parts: Vec<String> = e
                .messages()
                .flat_map(|(_, p)| p)
                .map(str::to_string)
                .collect();
            (joined(e), parts)
        };
        let (text, parts) = with_encoded(&wire, a, (0, &messages), user, read);
        assert_eq!((text, &parts), (texts.join(","), &texts));
        for cut in [999, 700, 512, 3, 0] {
            forget(&wire, cut);
            let (text, parts) = with_encoded(&wire, a, (0, &messages[..cut]), user, read);
            assert_eq!((text, &parts[..]), (texts[..cut].join(","), &texts[..cut]));
        }
        // Encoding on from a cut.
        let (text, _) = with_encoded(&wire, a, (0, &messages[..10]), user, read);
        assert_eq!(text, texts[..10].join(","));
    }
}
