//! JSON-RPC error objects and the codes ACP uses.

use serde::Serialize;
use serde_json::{Value, json};

pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;
pub const METHOD_NOT_FOUND: i32 = -32601;
pub const INVALID_PARAMS: i32 = -32602;
pub const INTERNAL_ERROR: i32 = -32603;
pub const AUTH_REQUIRED: i32 = -32000;
pub const RESOURCE_NOT_FOUND: i32 = -32002;
pub const REQUEST_CANCELLED: i32 = -32800;

/// An error answer: `{code, message, data?}`. Messages stay one short sentence; details go
/// in `data`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i32,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn parse_error(detail: impl std::fmt::Display) -> Self {
        Self::new(PARSE_ERROR, "Parse error").with_data(json!({ "detail": detail.to_string() }))
    }

    pub fn invalid_request(detail: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, detail)
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
            .with_data(json!({ "method": method }))
    }

    pub fn invalid_params(detail: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, format!("Invalid params: {}", detail.into()))
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, format!("Internal error: {}", detail.into()))
    }

    pub fn session_not_found(session_id: &str) -> Self {
        Self::new(RESOURCE_NOT_FOUND, "Session not found")
            .with_data(json!({ "sessionId": session_id }))
    }

    pub fn cancelled() -> Self {
        Self::new(REQUEST_CANCELLED, "Request cancelled")
    }

    pub fn auth_required(detail: impl Into<String>) -> Self {
        Self::new(AUTH_REQUIRED, "Authentication required")
            .with_data(json!({ "detail": detail.into() }))
    }

    /// Reads an error object the client sent us; anything malformed becomes an internal error
    /// so the waiting task still gets an answer.
    pub fn from_value(value: &Value) -> Self {
        let code = value
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or(INTERNAL_ERROR as i64);
        let message = value
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("error without a message");
        RpcError {
            code: i32::try_from(code).unwrap_or(INTERNAL_ERROR),
            message: message.to_string(),
            data: value.get("data").cloned(),
        }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}
