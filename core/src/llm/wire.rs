//! Messages as a provider encodes them, kept between the requests of a session. A session's
//! requests only ever append (until a compaction rewrites its context, which starts a new
//! cache), so each request encodes just the messages added since the previous one and copies
//! the rest: the engine's cost of a model step stays flat however long the session grows.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::chat::Message;

/// One message as its provider encodes it: the JSON texts of its wire messages (OpenAI) or
/// content blocks (Anthropic), in order, and the role they go under.
pub struct Encoded {
    pub role: &'static str,
    pub parts: Vec<String>,
}

#[derive(Default)]
pub struct WireCache {
    /// Whose encoding this is (a session may switch between providers).
    dialect: &'static str,
    encoded: Vec<Encoded>,
}

impl std::fmt::Debug for WireCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "WireCache({}: {} messages)",
            self.dialect,
            self.encoded.len()
        )
    }
}

/// A session's cache, shared by its requests.
pub type SharedWire = Arc<Mutex<WireCache>>;

/// Runs `assemble` on the encoding of every one of `messages`, encoding only those the cache
/// has not seen. `messages` must extend what the cache was filled from (the session starts a
/// new cache whenever its context is rewritten).
pub fn with_encoded<R>(
    wire: &SharedWire,
    dialect: &'static str,
    messages: &[Message],
    encode: impl Fn(&Message) -> Encoded,
    assemble: impl FnOnce(&[Encoded]) -> R,
) -> R {
    let mut cache = wire.lock().unwrap_or_else(|p| p.into_inner());
    if cache.dialect != dialect || cache.encoded.len() > messages.len() {
        cache.dialect = dialect;
        cache.encoded.clear();
    }
    let known = cache.encoded.len();
    cache.encoded.extend(messages[known..].iter().map(encode));
    assemble(&cache.encoded)
}

/// Drops the encodings of the messages from `from` on: they changed (a prompt's next block
/// joined its message).
pub fn forget(wire: &SharedWire, from: usize) {
    let mut cache = wire.lock().unwrap_or_else(|p| p.into_inner());
    cache.encoded.truncate(from);
}

/// The JSON text of the object `head` with `"messages": [items…]` appended as its last
/// member — the same bytes serializing the whole body as one value gives.
pub fn body_with_messages<'a>(head: &Value, items: impl Iterator<Item = &'a str>) -> String {
    let head = head.to_string();
    let mut body = String::with_capacity(head.len() + 64);
    body.push_str(&head[..head.len() - 1]);
    body.push_str(if head.len() > 2 {
        ",\"messages\":["
    } else {
        "\"messages\":["
    });
    for (i, item) in items.enumerate() {
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
        assert_eq!(
            body_with_messages(&head, texts.iter().map(String::as_str)),
            whole.to_string()
        );
        assert_eq!(
            body_with_messages(&json!({}), std::iter::empty()),
            r#"{"messages":[]}"#
        );
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
        with_encoded(&wire, "a", &messages, encode, |e| assert_eq!(e.len(), 1));
        messages.push(Message::user_text("two"));
        with_encoded(&wire, "a", &messages, encode, |e| assert_eq!(e.len(), 2));
        assert_eq!(encodings.get(), 2);
        // Another provider's request encodes all again.
        with_encoded(&wire, "b", &messages, encode, |e| assert_eq!(e.len(), 2));
        assert_eq!(encodings.get(), 4);
    }
}
