//! Reading one inbound frame into a JSON-RPC message, and writing outbound frames.
//!
//! Every rejection carries the answer the JSON-RPC spec prescribes, with the request's id
//! when one could be read, so the caller only has to deliver it.
//!
//! A frame is read once, into its members as raw JSON text borrowed from the frame: no
//! JSON tree is built for the envelope, and a request's params are parsed straight into
//! the handler's type later. Frames are on every hot path.

use std::borrow::Cow;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::error::RpcError;

/// A request id as the peer sent it: a string or an integer.
pub type RequestId = Value;

/// A request's or notification's params: `{}` when the frame had none.
pub type Params<'a> = &'a RawValue;

#[derive(Debug)]
pub enum Inbound<'a> {
    Request {
        id: RequestId,
        method: String,
        params: Params<'a>,
    },
    Notification {
        method: String,
        params: Params<'a>,
    },
    Response {
        id: RequestId,
        outcome: Result<Value, RpcError>,
    },
}

/// A frame that can't be served: answer `error` to `id` (`null` when unknown), unless the
/// frame was a notification, which never gets an answer.
#[derive(Debug)]
pub struct Rejected {
    pub id: Value,
    pub error: RpcError,
    pub answer: bool,
}

impl Rejected {
    fn new(id: Value, error: RpcError) -> Box<Self> {
        Box::new(Rejected {
            id,
            error,
            answer: true,
        })
    }
}

/// The members of a JSON-RPC message, unparsed. A member that is present is `Some`, even
/// when its value is `null` (an `"id": null` is an error, not a notification).
#[derive(Default)]
struct Members<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
        let mut members = Members::default();
        while let Some(member) = map.next_key::<Member>()? {
            let slot = match member {
                Member::Jsonrpc => &mut members.jsonrpc,
                Member::Id => &mut members.id,
                Member::Method => &mut members.method,
                Member::Params => &mut members.params,
                Member::Result => &mut members.result,
                Member::Error => &mut members.error,
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            // A repeated member: the last one wins, as in JavaScript's `JSON.parse`, which is
            // what most clients build their frames with.
            *slot = Some(map.next_value()?);
        }
        Ok(members)
    }
}

/// What a request without params gets, so handlers always see an object.
fn empty_params() -> &'static RawValue {
    serde_json::from_str("{}").expect("`{}` is JSON")
}

pub fn parse(frame: &str) -> Result<Inbound<'_>, Box<Rejected>> {
    if !frame.trim_start().starts_with('{') {
        return Err(Rejected::new(Value::Null, not_an_object(frame)));
    }
    if has_surrogate_escape(frame)
        && let Err(e) = serde_json::from_str::<Value>(frame)
    {
        // The grammar lets a `\uDC00` stand alone, and reading raw members accepts it, but no
        // string can hold it: the frame is as unreadable as it was when every frame was
        // parsed into a tree. Checked only when such an escape is there (clients rarely
        // escape non-ASCII at all), so the common path stays free of a full parse.
        return Err(Rejected::new(Value::Null, RpcError::parse_error(e)));
    }
    match serde_json::from_str::<Members>(frame) {
        Ok(members) => classify(members),
        Err(e) => Err(Rejected::new(Value::Null, RpcError::parse_error(e))),
    }
}

/// Whether `frame` holds a `\uD800`–`\uDFFF` escape (half of a surrogate pair).
fn has_surrogate_escape(frame: &str) -> bool {
    let bytes = frame.as_bytes();
    frame.match_indices("\\u").any(|(i, _)| {
        matches!(bytes.get(i + 2), Some(b'd' | b'D'))
            && matches!(
                bytes.get(i + 3),
                Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            )
    })
}

/// The answer to a frame that is not a JSON object.
fn not_an_object(frame: &str) -> RpcError {
    // Not a hot path: a full parse, so that nesting too deep to read is a parse error here
    // as it is inside an object.
    match serde_json::from_str::<Value>(frame) {
        Err(e) => RpcError::parse_error(e),
        Ok(_) if frame.trim_start().starts_with('[') => {
            RpcError::invalid_request("Batch requests are not supported")
        }
        Ok(_) => RpcError::invalid_request("A JSON-RPC message must be an object"),
    }
}

fn classify(members: Members<'_>) -> Result<Inbound<'_>, Box<Rejected>> {
    // A response is never answered, whatever is wrong with it: two peers that answered each
    // other's malformed responses (one with `"id": null`, from a client that could not parse
    // a notification) would loop forever.
    let is_response =
        members.method.is_none() && (members.result.is_some() || members.error.is_some());
    match classify_envelope(members) {
        Err(mut rejected) if is_response => {
            tracing::warn!(error = %rejected.error.message, "dropping a malformed response");
            rejected.answer = false;
            Err(rejected)
        }
        classified => classified,
    }
}

fn classify_envelope(members: Members<'_>) -> Result<Inbound<'_>, Box<Rejected>> {
    let valid_id = match members.id.map(json) {
        None => None,
        Some(v @ Value::String(_)) => Some(v),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n)),
        Some(_) => {
            return Err(Rejected::new(
                Value::Null,
                RpcError::invalid_request("`id` must be a string or an integer"),
            ));
        }
    };
    let reply_id = valid_id.clone().unwrap_or(Value::Null);
    let version = members.jsonrpc.and_then(|v| text(v).ok());
    if version.as_deref() != Some("2.0") {
        return Err(Rejected::new(
            reply_id,
            RpcError::invalid_request("`jsonrpc` must be \"2.0\""),
        ));
    }
    let Some(method) = members.method else {
        return classify_response(valid_id, members.result, members.error);
    };
    let Ok(method) = text(method) else {
        return Err(Rejected::new(
            reply_id,
            RpcError::invalid_request("`method` must be a string"),
        ));
    };
    let params = match members.params {
        None => empty_params(),
        Some(p) if p.get() == "null" => empty_params(),
        Some(p) if p.get().starts_with(['{', '[']) => p,
        Some(_) => {
            let mut rejected = Rejected::new(
                reply_id,
                RpcError::invalid_request("`params` must be an object or an array"),
            );
            rejected.answer = valid_id.is_some();
            return Err(rejected);
        }
    };
    let method = method.into_owned();
    Ok(match valid_id {
        Some(id) => Inbound::Request { id, method, params },
        None => Inbound::Notification { method, params },
    })
}

fn classify_response<'a>(
    id: Option<Value>,
    result: Option<&RawValue>,
    error: Option<&RawValue>,
) -> Result<Inbound<'a>, Box<Rejected>> {
    match (id, result, error) {
        (Some(id), Some(result), None) => Ok(Inbound::Response {
            id,
            outcome: Ok(json(result)),
        }),
        (Some(id), None, Some(error)) => Ok(Inbound::Response {
            id,
            outcome: Err(RpcError::from_value(&json(error))),
        }),
        (id, _, _) => Err(Rejected::new(
            id.unwrap_or(Value::Null),
            RpcError::invalid_request(
                "Not a request, notification or response: expected `method`, or `id` with exactly one of `result` and `error`",
            ),
        )),
    }
}

/// A member's value. It was read as valid JSON already, so this cannot fail.
fn json(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

/// A member that must be a string (escapes resolved).
fn text(raw: &RawValue) -> Result<Cow<'_, str>, serde_json::Error> {
    serde_json::from_str(raw.get())
}

/// Room for a typical frame (a streamed chunk, a short answer) in one allocation.
const FRAME_CAPACITY: usize = 256;

/// An outbound message, serialized straight from borrowed parts: no JSON tree is built or
/// copied for the envelope (frames are on every hot path).
#[derive(serde::Serialize)]
struct Frame<'a, P: serde::Serialize, R: serde::Serialize + ?Sized = Value> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
}

impl<'a, P: serde::Serialize, R: serde::Serialize + ?Sized> Frame<'a, P, R> {
    fn new() -> Self {
        Frame {
            jsonrpc: "2.0",
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        }
    }

    fn write(&self) -> String {
        self.write_sized(FRAME_CAPACITY)
    }

    /// `write` into a buffer of `capacity` bytes: a frame that outgrows its buffer is copied
    /// at each doubling.
    fn write_sized(&self, capacity: usize) -> String {
        let mut out = Vec::with_capacity(capacity);
        // Serializing borrowed JSON values and plain strings cannot fail, and serde_json
        // writes UTF-8.
        let _ = serde_json::to_writer(&mut out, self);
        String::from_utf8(out).unwrap_or_default()
    }
}

pub fn response_frame(id: &RequestId, outcome: &Result<Value, RpcError>) -> String {
    let mut frame = Frame::<()>::new();
    frame.id = Some(id);
    match outcome {
        Ok(result) => frame.result = Some(result),
        Err(error) => frame.error = Some(error),
    }
    frame.write()
}

/// A success response whose result is already JSON text (answers that never change are
/// serialized once).
pub fn raw_result_frame(id: &RequestId, result: &serde_json::value::RawValue) -> String {
    let mut frame = Frame::<(), _>::new();
    (frame.id, frame.result) = (Some(id), Some(result));
    frame.write_sized(result.get().len() + FRAME_CAPACITY)
}

pub fn request_frame(id: &RequestId, method: &str, params: &Value) -> String {
    let mut frame = Frame::<_>::new();
    (frame.id, frame.method, frame.params) = (Some(id), Some(method), Some(params));
    frame.write()
}

pub fn notification_frame<P: serde::Serialize>(method: &str, params: P) -> String {
    notification_frame_sized(method, params, FRAME_CAPACITY)
}

/// `notification_frame` for a caller that knows about how long the frame will be.
pub fn notification_frame_sized<P: serde::Serialize>(
    method: &str,
    params: P,
    capacity: usize,
) -> String {
    let mut frame = Frame::<_>::new();
    (frame.method, frame.params) = (Some(method), Some(params));
    frame.write_sized(capacity)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::rpc::error::*;

    fn rejected(frame: &str) -> Box<Rejected> {
        parse(frame).expect_err(frame)
    }

    #[test]
    fn garbage_is_a_parse_error_with_null_id() {
        let r = rejected("{not json");
        assert_eq!((r.error.code, r.id), (PARSE_ERROR, Value::Null));
    }

    #[test]
    fn batches_and_scalars_are_invalid_requests() {
        assert_eq!(rejected("[]").error.code, INVALID_REQUEST);
        assert_eq!(
            rejected(r#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#)
                .error
                .code,
            INVALID_REQUEST
        );
        assert_eq!(rejected("42").error.code, INVALID_REQUEST);
    }

    #[test]
    fn bad_envelopes_keep_the_id_when_readable() {
        let r = rejected(r#"{"jsonrpc":"1.0","id":7,"method":"x"}"#);
        assert_eq!((r.error.code, r.id), (INVALID_REQUEST, json!(7)));
        let r = rejected(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#);
        assert_eq!((r.error.code, r.id), (INVALID_REQUEST, Value::Null));
        let r = rejected(r#"{"jsonrpc":"2.0","id":"a","method":3}"#);
        assert_eq!((r.error.code, r.id), (INVALID_REQUEST, json!("a")));
        let r = rejected(r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#);
        assert_eq!(r.error.code, INVALID_REQUEST);
    }

    #[test]
    fn only_objects_are_messages() {
        // Six members in order would fill an envelope by position if arrays were read as one.
        let r = rejected(r#"["2.0", 1, "initialize", {}, null, null]"#);
        assert_eq!(r.error.message, "Batch requests are not supported");
        assert_eq!(rejected("[1,").error.code, PARSE_ERROR);
        assert_eq!(
            rejected(r#"{"jsonrpc":"2.0","id":1,"#).error.code,
            PARSE_ERROR
        );
    }

    #[test]
    fn a_repeated_member_takes_its_last_value() {
        let frame = r#"{"jsonrpc":"2.0","method":"a","method":"session/cancel","params":{}}"#;
        match parse(frame) {
            Ok(Inbound::Notification { method, .. }) => assert_eq!(method, "session/cancel"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_lone_surrogate_is_a_parse_error_even_in_a_replaced_member() {
        let frame = r#"{"jsonrpc":"2.0","id":1,"method":"x\ude00","method":"y"}"#;
        assert_eq!(rejected(frame).error.code, PARSE_ERROR);
        let paired = r#"{"jsonrpc":"2.0","id":1,"method":"\ud83d\ude00"}"#;
        assert!(matches!(parse(paired), Ok(Inbound::Request { method, .. }) if method == "😀"));
    }

    /// Responses with a null id (or anything else wrong) are dropped, never answered.
    #[test]
    fn a_malformed_response_is_never_answered() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":1}"#,
        ] {
            assert!(!rejected(frame).answer, "{frame}");
        }
    }

    #[test]
    fn a_null_id_is_an_error_not_a_notification() {
        let r = rejected(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#);
        assert_eq!(
            (r.error.code, r.id, r.answer),
            (INVALID_REQUEST, Value::Null, true)
        );
    }

    #[test]
    fn members_are_read_as_json_not_as_text() {
        match parse(r#"{"jsonrpc":"2\u002e0","id":"a","method":"x\/y","params":null}"#) {
            Ok(Inbound::Request { id, method, params }) => {
                assert_eq!(
                    (id, method.as_str(), params.get()),
                    (json!("a"), "x/y", "{}")
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn notification_with_bad_params_is_not_answered() {
        let r = rejected(r#"{"jsonrpc":"2.0","method":"x","params":3}"#);
        assert!(!r.answer);
    }

    #[test]
    fn classifies_the_three_kinds() {
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","id":"r1","method":"initialize","params":{}}"#),
            Ok(Inbound::Request { .. })
        ));
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#),
            Ok(Inbound::Notification { .. })
        ));
        match parse(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"x"}}"#) {
            Ok(Inbound::Response {
                id,
                outcome: Err(e),
            }) => {
                assert_eq!((id, e.code), (json!(3), REQUEST_CANCELLED))
            }
            other => panic!("{other:?}"),
        }
    }
}
