//! Reading one inbound frame into a JSON-RPC message, and writing outbound frames.
//!
//! Every rejection carries the answer the JSON-RPC spec prescribes, with the request's id
//! when one could be read, so the caller only has to deliver it.

use serde_json::{Map, Value};

use super::error::RpcError;

/// A request id as the peer sent it: a string or an integer.
pub type RequestId = Value;

#[derive(Debug)]
pub enum Inbound {
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
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

pub fn parse(frame: &str) -> Result<Inbound, Box<Rejected>> {
    let value: Value = serde_json::from_str(frame)
        .map_err(|e| Rejected::new(Value::Null, RpcError::parse_error(e)))?;
    match value {
        Value::Object(object) => classify(object),
        Value::Array(_) => Err(Rejected::new(
            Value::Null,
            RpcError::invalid_request("Batch requests are not supported"),
        )),
        _ => Err(Rejected::new(
            Value::Null,
            RpcError::invalid_request("A JSON-RPC message must be an object"),
        )),
    }
}

fn classify(mut object: Map<String, Value>) -> Result<Inbound, Box<Rejected>> {
    let id = object.remove("id");
    let valid_id = match &id {
        None => None,
        Some(v @ Value::String(_)) => Some(v.clone()),
        Some(v @ Value::Number(n)) if n.is_i64() || n.is_u64() => Some(v.clone()),
        Some(_) => {
            return Err(Rejected::new(
                Value::Null,
                RpcError::invalid_request("`id` must be a string or an integer"),
            ));
        }
    };
    let reply_id = valid_id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Rejected::new(
            reply_id,
            RpcError::invalid_request("`jsonrpc` must be \"2.0\""),
        ));
    }
    match object.remove("method") {
        Some(Value::String(method)) => {
            let params = match object.remove("params") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(p @ (Value::Object(_) | Value::Array(_))) => p,
                Some(_) => {
                    let mut rejected = Rejected::new(
                        reply_id,
                        RpcError::invalid_request("`params` must be an object or an array"),
                    );
                    rejected.answer = valid_id.is_some();
                    return Err(rejected);
                }
            };
            Ok(match valid_id {
                Some(id) => Inbound::Request { id, method, params },
                None => Inbound::Notification { method, params },
            })
        }
        Some(_) => Err(Rejected::new(
            reply_id,
            RpcError::invalid_request("`method` must be a string"),
        )),
        None => classify_response(valid_id, object),
    }
}

fn classify_response(
    id: Option<Value>,
    mut object: Map<String, Value>,
) -> Result<Inbound, Box<Rejected>> {
    let (result, error) = (object.remove("result"), object.remove("error"));
    match (id, result, error) {
        (Some(id), Some(result), None) => Ok(Inbound::Response {
            id,
            outcome: Ok(result),
        }),
        (Some(id), None, Some(error)) => Ok(Inbound::Response {
            id,
            outcome: Err(RpcError::from_value(&error)),
        }),
        (id, _, _) => Err(Rejected::new(
            id.unwrap_or(Value::Null),
            RpcError::invalid_request(
                "Not a request, notification or response: expected `method`, or `id` with exactly one of `result` and `error`",
            ),
        )),
    }
}

/// An outbound message, serialized straight from borrowed parts: no JSON tree is built or
/// copied for the envelope (frames are on every hot path).
#[derive(serde::Serialize)]
struct Frame<'a, P: serde::Serialize> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
}

impl<'a, P: serde::Serialize> Frame<'a, P> {
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
        // Serializing borrowed JSON values and plain strings cannot fail.
        serde_json::to_string(self).unwrap_or_default()
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

pub fn request_frame(id: &RequestId, method: &str, params: &Value) -> String {
    let mut frame = Frame::new();
    (frame.id, frame.method, frame.params) = (Some(id), Some(method), Some(params));
    frame.write()
}

pub fn notification_frame<P: serde::Serialize>(method: &str, params: P) -> String {
    let mut frame = Frame::new();
    (frame.method, frame.params) = (Some(method), Some(params));
    frame.write()
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
