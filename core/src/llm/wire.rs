//! Messages as a provider encodes them, kept between the requests of a session. A session's
//! requests only ever append (until a compaction rewrites its context, which starts a new
//! cache), so each request encodes just the messages added since the previous one, and its
//! body shares the encoded text with the cache instead of copying it (`body.rs`): the text is
//! kept in a few pieces of shared bytes, which each request's body lists (the step at ~100
//! and ~3,000 messages: `benches/README.md`).
//!
//! Anthropic's messages are kept as they are sent: as turns, `{"role":…,"content":[blocks]}`,
//! consecutive user messages sharing one. A turn is closed (`]}`) only when the next one
//! opens, so the text always ends inside the newest turn, ready for what joins it; a request
//! lists the text as it is, with its cache breakpoints spliced into the two newest user
//! turns' last blocks (`WireCache::turns`) — no request regroups the conversation.

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::body::Body;
use crate::chat::Message;
use crate::config::ProviderName;

/// How a session's messages are encoded: in which provider's terms, and whether its images
/// go as images or as notes saying one was there (a model without vision:
/// `chat::without_images`). A request in another dialect than the cache's encodes anew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    pub provider: ProviderName,
    pub images: bool,
}

/// The role a message's parts go under: Anthropic's turns (the cache keeps them as turns);
/// OpenAI's parts name their own.
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
/// (but the system message); for Anthropic, the parts inside the turns they go in, the
/// newest left open (`turns`). The text up to the last request is in pieces of shared bytes
/// that request bodies hold rather than copy; what the cache keeps besides the text is a few
/// bytes a part, a message and a turn.
#[derive(Default)]
pub struct WireCache {
    /// Whose encoding this is (a session may switch between providers, and models).
    dialect: Option<Dialect>,
    /// The text up to the last request (`seal`).
    sealed: Vec<Bytes>,
    /// The bytes in `sealed`.
    sealed_len: usize,
    /// The text encoded since.
    open: String,
    /// Where each part ends in the text.
    part_ends: Vec<u32>,
    /// Each message's first part's index in `part_ends`.
    messages: Vec<u32>,
    /// The turns the text holds, when its messages go under a role (Anthropic's).
    turns: Vec<Turn>,
}

/// A turn in the text: its role and its first message (whose first part is the turn's).
struct Turn {
    role: Role,
    first_message: u32,
}

/// What marks a block as a prompt-cache breakpoint: it joins the block as its last member.
const BREAKPOINT: &str = r#","cache_control":{"type":"ephemeral"}}"#;

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
        let index = offset(self.messages.len());
        self.messages.push(offset(self.part_ends.len()));
        if encoded.parts.is_empty() {
            return;
        }
        // Whether the first part follows a block or a message it is separated from by a comma.
        let mut after = match encoded.role {
            Role::Own => self.len() > 0,
            role if self.joins_turn(role) => true,
            role => {
                self.open_turn(role, index);
                false
            }
        };
        for part in encoded.parts {
            if after {
                self.open.push(',');
            }
            after = true;
            self.open.push_str(&part);
            self.part_ends.push(offset(self.len()));
        }
    }

    /// Whether a message of `role` goes in the newest turn: a user message after a user
    /// turn (tool results, then the next prompt). Consecutive answers stay apart (one paused
    /// by `pause_turn`, then the rest): the API joins them itself, and the request that
    /// resumed the paused one stays a prefix of the next.
    fn joins_turn(&self, role: Role) -> bool {
        role == Role::User
            && self
                .turns
                .last()
                .is_some_and(|turn| turn.role == Role::User)
    }

    /// Closes the newest turn, if any, and opens one of `role` whose first message is
    /// `index`.
    fn open_turn(&mut self, role: Role, index: u32) {
        if !self.turns.is_empty() {
            self.open.push_str("]},");
        }
        self.open.push_str(r#"{"role":""#);
        self.open.push_str(role.as_str());
        self.open.push_str(r#"","content":["#);
        self.turns.push(Turn {
            role,
            first_message: index,
        });
    }

    /// Where turn `i`'s last block ends: at the end of the last part before the next turn's
    /// first (every part between belongs to turn `i`), or of the text's last part.
    fn turn_end(&self, i: usize) -> usize {
        let next_first_part = match self.turns.get(i + 1) {
            Some(next) => self.messages[next.first_message as usize] as usize,
            None => self.part_ends.len(),
        };
        self.part_ends[next_first_part - 1] as usize
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
        let Some(&first) = self.messages.get(from) else {
            return;
        };
        self.messages.truncate(from);
        self.part_ends.truncate(first as usize);
        let end = self.part_ends.last().map_or(0, |&end| end as usize);
        let kept = self
            .turns
            .partition_point(|turn| (turn.first_message as usize) < from);
        self.turns.truncate(kept);
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

    /// The whole text, in pieces: for OpenAI, every part, in order, joined by commas (sealed:
    /// see `with_encoded`; Anthropic's requests take `turns`).
    pub fn pieces(&self) -> &[Bytes] {
        debug_assert!(self.open.is_empty(), "sealed before a request reads it");
        &self.sealed
    }

    /// The turns as a request sends them, in pieces: the text with its newest turn closed,
    /// and a prompt-cache breakpoint in the last block of each of the two newest user turns
    /// — the newest, where this request writes the cache up to, and the one before it, where
    /// the previous request wrote it, so that this one reads it even when more than the
    /// API's 20-block lookback was added since. (With the system prompt's, three of the four
    /// breakpoints the API allows.) Sealed: see `with_encoded`.
    pub fn turns(&self) -> Vec<Bytes> {
        debug_assert!(self.open.is_empty(), "sealed before a request reads it");
        let mut marks: Vec<usize> = (self.turns.iter().enumerate().rev())
            .filter(|(_, turn)| turn.role == Role::User)
            .take(2)
            .map(|(i, _)| self.turn_end(i))
            .collect();
        marks.reverse();
        let mut pieces = Vec::new();
        let mut from = 0;
        for mark in marks {
            // The block's closing brace makes way for the breakpoint, which closes it.
            self.slice(from, mark - 1, &mut pieces);
            pieces.push(Bytes::from_static(BREAKPOINT.as_bytes()));
            from = mark;
        }
        self.slice(from, self.sealed_len, &mut pieces);
        if !self.turns.is_empty() {
            pieces.push(Bytes::from_static(b"]}"));
        }
        pieces
    }

    /// Appends the sealed text from `start` to `end` to `out`, as slices of its pieces
    /// (shared, not copied).
    fn slice(&self, start: usize, end: usize, out: &mut Vec<Bytes>) {
        let mut at = 0;
        for piece in &self.sealed {
            let (low, high) = (at, at + piece.len());
            at = high;
            let (from, to) = (start.max(low), end.min(high));
            if from < to {
                out.push(piece.slice(from - low..to - low));
            }
            if high >= end {
                break;
            }
        }
    }
}

/// A session's cache, shared by its requests.
pub type SharedWire = Arc<Mutex<WireCache>>;

/// Runs `assemble` on the encoding of a context whose first `earlier` messages the cache
/// holds already (their values are kept nowhere else in memory) and whose next ones are
/// `messages`, encoding only those the cache has not seen; `assemble` gets the text sealed
/// (`WireCache::pieces`, `WireCache::turns`). The context must extend what the cache was filled from (the
/// session starts a new cache whenever its context is rewritten); with `earlier` messages,
/// the cache must hold them in `dialect` (`agent/request.rs` brings them back from the log
/// otherwise).
pub fn with_encoded<R>(
    wire: &SharedWire,
    dialect: Dialect,
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

/// How many messages the cache holds the encoding of, and in which dialect.
pub fn encoded(wire: &SharedWire) -> (Option<Dialect>, usize) {
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
pub fn body_with_messages(head: &impl serde::Serialize, runs: Vec<Vec<Bytes>>) -> Body {
    let head = serde_json::to_string(head).expect("a request's head serializes");
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
    use serde_json::{Value, json};

    use super::*;
    use crate::chat::UserPart;

    fn joined(cache: &WireCache) -> String {
        String::from_utf8(cache.pieces().concat()).unwrap()
    }

    /// How many parts each message has.
    fn part_counts(cache: &WireCache) -> Vec<usize> {
        let firsts: Vec<usize> = cache.messages.iter().map(|&f| f as usize).collect();
        let ends = firsts
            .iter()
            .skip(1)
            .copied()
            .chain([cache.part_ends.len()]);
        firsts
            .iter()
            .zip(ends)
            .map(|(first, end)| end - first)
            .collect()
    }

    /// The parts, read back from the text (messages of `Role::Own`: parts joined by commas).
    fn parts(cache: &WireCache) -> Vec<String> {
        let text = joined(cache);
        let mut start = 0;
        (cache.part_ends.iter())
            .map(|&end| {
                let part = text[start..end as usize].to_string();
                start = end as usize + 1;
                part
            })
            .collect()
    }

    /// A user message's text blocks, under its own role (as OpenAI's messages go).
    fn user(m: &Message) -> Encoded {
        Encoded {
            role: Role::Own,
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
        let count = |e: &WireCache| e.messages.len();
        let a = dialect(ProviderName::Openai);
        let b = dialect(ProviderName::Anthropic);
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
        // Another provider's request encodes all again, and so does one for a model of the
        // same provider without vision.
        assert_eq!(with_encoded(&wire, b, (0, &messages), encode, count), 3);
        assert_eq!(encodings.get(), 6);
        let blind = Dialect { images: false, ..b };
        assert_eq!(with_encoded(&wire, blind, (0, &messages), encode, count), 3);
        assert_eq!(encodings.get(), 9);
    }

    /// A dialect with images.
    fn dialect(provider: ProviderName) -> Dialect {
        Dialect {
            provider,
            images: true,
        }
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
        let parts = |e: &WireCache| (joined(e), part_counts(e));
        let a = dialect(ProviderName::Openai);
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
        let a = dialect(ProviderName::Openai);
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
        let read = |e: &WireCache| (joined(e), parts(e));
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

    /// The turns as the Messages API takes them, built whole from every message's role and
    /// blocks: what `WireCache::turns` must give, however the cache got there.
    fn whole_turns(messages: &[(Role, Vec<String>)]) -> String {
        let mut turns: Vec<(Role, Vec<&str>)> = Vec::new();
        for (role, blocks) in messages.iter().filter(|(_, blocks)| !blocks.is_empty()) {
            let blocks = blocks.iter().map(String::as_str);
            match turns.last_mut() {
                Some((last, content)) if *last == *role && *role == Role::User => {
                    content.extend(blocks)
                }
                _ => turns.push((*role, blocks.collect())),
            }
        }
        let users = turns.iter().enumerate().rev();
        let marked: Vec<usize> = (users.filter(|(_, (role, _))| *role == Role::User))
            .take(2)
            .map(|(i, _)| i)
            .collect();
        let turns: Vec<String> = (turns.iter().enumerate())
            .map(|(i, (role, blocks))| {
                let mut content = blocks.join(",");
                if marked.contains(&i) {
                    content.pop();
                    content.push_str(BREAKPOINT);
                }
                format!(r#"{{"role":"{}","content":[{content}]}}"#, role.as_str())
            })
            .collect();
        turns.join(",")
    }

    /// Messages of a tool loop, with the shapes that test the grouping: several blocks, user
    /// messages in a row (tool results then a prompt), an answer with no block, two answers
    /// in a row.
    fn conversation(n: usize) -> Vec<(Role, Vec<String>)> {
        let block =
            |i: usize, j: usize| json!({"type": "text", "text": format!("{i}.{j}")}).to_string();
        (0..n)
            .map(|i| match i % 7 {
                0 | 2 | 3 => (Role::User, (0..1 + i % 2).map(|j| block(i, j)).collect()),
                4 => (Role::Assistant, Vec::new()),
                _ => (
                    Role::Assistant,
                    (0..1 + i % 3).map(|j| block(i, j)).collect(),
                ),
            })
            .collect()
    }

    /// A request per message, cuts anywhere (a prompt's block joining its message), and
    /// encoding on from a cut: the turns are always what building them whole gives, and a
    /// request lists the cache's pieces (sliced, not copied) plus a few of its own.
    #[test]
    fn turns_are_kept_as_sent_and_marked_on_the_two_newest_user_turns() {
        let messages = conversation(300);
        let as_messages: Vec<Message> = (0..messages.len())
            .map(|i| Message::user_text(i.to_string()))
            .collect();
        let encode = |m: &Message| {
            let Message::User { content } = m else {
                unreachable!()
            };
            let UserPart::Text { text } = &content[0] else {
                unreachable!()
            };
            let (role, parts) = messages[text.parse::<usize>().unwrap()].clone();
            Encoded { role, parts }
        };
        let wire = SharedWire::default();
        let a = dialect(ProviderName::Anthropic);
        let turns = |e: &WireCache| {
            let pieces = e.turns();
            assert!(pieces.len() <= e.pieces().len() + 5, "{}", pieces.len());
            String::from_utf8(pieces.concat()).unwrap()
        };
        for n in 0..=messages.len() {
            let sent = with_encoded(&wire, a, (0, &as_messages[..n]), encode, turns);
            assert_eq!(sent, whole_turns(&messages[..n]), "{n} messages");
            let sent: Value = serde_json::from_str(&format!("[{sent}]")).unwrap();
            assert!(sent.is_array());
        }
        for cut in [299, 150, 73, 9, 3, 1, 0] {
            forget(&wire, cut);
            let sent = with_encoded(&wire, a, (0, &as_messages[..cut]), encode, turns);
            assert_eq!(sent, whole_turns(&messages[..cut]), "cut at {cut}");
            let on = (cut + 5).min(messages.len());
            let sent = with_encoded(&wire, a, (0, &as_messages[..on]), encode, turns);
            assert_eq!(sent, whole_turns(&messages[..on]), "on from {cut}");
        }
    }
}
