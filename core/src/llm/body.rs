//! A request's body as pieces of shared bytes: the encoded conversation is the cache's own
//! text (`wire.rs`), listed rather than copied into a fresh buffer per request. It goes out
//! with its `Content-Length`, as one buffer would, never chunked: the server reads the same
//! bytes either way.

use std::convert::Infallible;

use bytes::Bytes;
use reqwest::RequestBuilder;
use reqwest::header::CONTENT_LENGTH;

#[derive(Clone, Default)]
pub struct Body {
    pieces: Vec<Bytes>,
    len: usize,
}

impl Body {
    pub fn push(&mut self, piece: Bytes) {
        if !piece.is_empty() {
            self.len += piece.len();
            self.pieces.push(piece);
        }
    }

    /// Sets the body of `request` (cheap: the pieces are shared, so a retry sends it again).
    pub fn attach(&self, request: RequestBuilder) -> RequestBuilder {
        if let [one] = &self.pieces[..] {
            return request.body(one.clone());
        }
        let pieces = self.pieces.clone().into_iter().map(Ok::<_, Infallible>);
        // Without the length, a body of pieces would go chunked.
        request
            .header(CONTENT_LENGTH, self.len)
            .body(reqwest::Body::wrap_stream(futures::stream::iter(pieces)))
    }

    /// The body's text, in one buffer.
    #[cfg(test)]
    pub fn text(&self) -> String {
        String::from_utf8(self.pieces.concat()).unwrap()
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        let mut body = Body::default();
        body.push(Bytes::from(text));
        body
    }
}
