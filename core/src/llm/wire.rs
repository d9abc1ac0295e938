//! Messages as a provider encodes them, kept between the requests of a session. A session's
//! requests only ever append (until a compaction rewrites its context, which starts a new
//! cache), so each request encodes just the messages added since the previous one and copies
//! the rest in one piece: what still grows with the session is that copy (`benches/README.md`
//! has the step at ~100 and ~3,000 messages).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::chat::Message;
use crate::config::ProviderName;

/// One message as its provider encodes it: the JSON texts of its wire messages (OpenAI) or
/// content blocks (Anthropic), in order, and the role they go under.
pub struct Encoded {
    pub role: &'static str,
    pub parts: Vec<String>,
}

/// The encodings of a session's messages, kept as one text: every part of every message in
/// order, separated by commas — for OpenAI, the request's `messages` array as it is sent
/// (but the system message), so a request copies it whole in one go. What the cache holds is
/// the text itself plus a few bytes a part, not a heap string per part.
#[derive(Default)]
pub struct WireCache {
    /// Whose encoding this is (a session may switch between providers).
    dialect: Option<ProviderName>,
    text: String,
    /// Where each part ends in `text`.
    part_ends: Vec<usize>,
    /// Each message's role and its first part's index in `part_ends`.
    messages: Vec<(&'static str, usize)>,
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

impl WireCache {
    fn push(&mut self, encoded: Encoded) {
        self.messages.push((encoded.role, self.part_ends.len()));
        let more: usize = encoded.parts.iter().map(|part| part.len() + 1).sum();
        if self.text.capacity() - self.text.len() < more {
            // A quarter more at a time: still amortized, where doubling could leave as many
            // bytes unused as the context holds.
            self.text.reserve_exact(more.max(self.text.len() / 4));
        }
        for part in encoded.parts {
            if !self.text.is_empty() {
                self.text.push(',');
            }
            self.text.push_str(&part);
            self.part_ends.push(self.text.len());
        }
    }

    /// Forgets the messages from `from` on.
    fn truncate(&mut self, from: usize) {
        let Some(&(_, first)) = self.messages.get(from) else {
            return;
        };
        self.messages.truncate(from);
        self.part_ends.truncate(first);
        self.text
            .truncate(self.part_ends.last().copied().unwrap_or(0));
    }

    /// Every part, in order, joined by commas.
    pub fn joined(&self) -> &str {
        &self.text
    }

    /// Each message's role and its parts, in order.
    pub fn messages(&self) -> impl Iterator<Item = (&'static str, Vec<&str>)> {
        let firsts = self.messages.iter().map(|&(_, first)| first);
        let ends = firsts.skip(1).chain(std::iter::once(self.part_ends.len()));
        self.messages
            .iter()
            .zip(ends)
            .map(|(&(role, first), end)| (role, (first..end).map(|i| self.part(i)).collect()))
    }

    fn part(&self, index: usize) -> &str {
        let start = match index {
            0 => 0,
            _ => self.part_ends[index - 1] + 1,
        };
        &self.text[start..self.part_ends[index]]
    }
}

/// A session's cache, shared by its requests.
pub type SharedWire = Arc<Mutex<WireCache>>;

/// Runs `assemble` on the encoding of a context whose first `earlier` messages the cache
/// holds already (their values are kept nowhere else in memory) and whose next ones are
/// `messages`, encoding only those the cache has not seen. The context must extend what the
/// cache was filled from (the session starts a new cache whenever its context is rewritten);
/// with `earlier` messages, the cache must hold them in `dialect` (`agent/request.rs` brings
/// them back from the log otherwise).
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

/// The JSON text of the object `head` with `"messages": [items…]` appended as its last
/// member — the same bytes serializing the whole body as one value gives — built in one
/// allocation of its final size. An empty item stands for nothing.
pub fn body_with_messages(head: &Value, items: &[&str]) -> String {
    let head = head.to_string();
    let items = || items.iter().filter(|item| !item.is_empty());
    let size: usize = items().map(|item| item.len() + 1).sum();
    let mut body = String::with_capacity(head.len() + size + 16);
    body.push_str(&head[..head.len() - 1]);
    body.push_str(if head.len() > 2 {
        ",\"messages\":["
    } else {
        "\"messages\":["
    });
    for (i, item) in items().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(item);
    }
    body.push_str("]}");
    body
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::UserPart;

    #[test]
    fn the_body_is_what_serializing_it_whole_gives() {
        let head = json!({"model": "m", "stream": true});
        let messages = [
            json!({"role": "user", "content": "a"}),
            json!({"role": "assistant", "content": "b"}),
        ];
        let texts: Vec<String> = messages.iter().map(Value::to_string).collect();
        let mut whole = head.clone();
        whole["messages"] = Value::Array(messages.to_vec());
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        assert_eq!(body_with_messages(&head, &texts), whole.to_string());
        assert_eq!(body_with_messages(&json!({}), &[]), r#"{"messages":[]}"#);
    }

    #[test]
    fn only_new_messages_are_encoded() {
        let wire = SharedWire::default();
        let encodings = std::cell::Cell::new(0);
        let encode = |m: &Message| {
            encodings.set(encodings.get() + 1);
            Encoded {
                role: "user",
                parts: vec![serde_json::to_string(m).unwrap()],
            }
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
        let encode = |m: &Message| Encoded {
            role: "user",
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
        };
        let two_blocks = Message::User {
            content: vec![
                UserPart::Text { text: "b".into() },
                UserPart::Text { text: "c".into() },
            ],
        };
        let messages = vec![Message::user_text("a"), two_blocks, Message::user_text("d")];
        let parts = |e: &WireCache| {
            (
                e.joined().to_string(),
                e.messages().map(|(_, p)| p.len()).collect::<Vec<_>>(),
            )
        };
        let a = ProviderName::Openai;
        let (joined, counts) = with_encoded(&wire, a, (0, &messages), encode, parts);
        let block = |t: &str| json!(t).to_string();
        assert_eq!(
            joined,
            [block("a"), block("b"), block("c"), block("d")].join(",")
        );
        assert_eq!(counts, [1, 2, 1]);
        forget(&wire, 1);
        let (joined, counts) = with_encoded(&wire, a, (0, &messages[..1]), encode, parts);
        assert_eq!((joined, counts), (block("a"), vec![1]));
    }
}
