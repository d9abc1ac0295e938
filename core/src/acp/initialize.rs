//! `initialize` and `authenticate`.

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::SessionAdditionalDirectoriesCapabilities;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, Implementation,
    InitializeRequest, InitializeResponse, McpCapabilities, PromptCapabilities,
    SessionCapabilities, SessionCloseCapabilities, SessionDeleteCapabilities,
    SessionListCapabilities, SessionResumeCapabilities,
};
use serde_json::{Value, json};

use super::call::{Call, params};
use crate::llm::openai::credential_hint;
use crate::rpc::RpcError;

/// The one auth method: a credential from the environment (or the host's config).
pub const OPENAI_AUTH_METHOD: &str = "openai-api-key";

/// Answers `protocolVersion: 1` whatever was asked (we speak only v1; the client decides),
/// and advertises only what works. A second `initialize` is answered the same way and
/// refreshes the client's capabilities.
pub fn initialize(call: Call, raw: Value) {
    let request: InitializeRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return call.respond(Err(e)),
    };
    {
        let mut client = call
            .shared()
            .client
            .write()
            .unwrap_or_else(|p| p.into_inner());
        client.initialized = true;
        client.capabilities =
            serde_json::to_value(&request.client_capabilities).unwrap_or(Value::Null);
    }
    call.reply(Ok(response()))
}

fn response() -> InitializeResponse {
    let sessions = SessionCapabilities::new()
        .list(SessionListCapabilities::new())
        .delete(SessionDeleteCapabilities::new())
        .resume(SessionResumeCapabilities::new())
        .close(SessionCloseCapabilities::new())
        .additional_directories(SessionAdditionalDirectoriesCapabilities::new());
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
        .mcp_capabilities(McpCapabilities::new())
        .session_capabilities(sessions);
    let auth = AuthMethodAgent::new(OPENAI_AUTH_METHOD, "OpenAI-compatible API key")
        .description(credential_hint());
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(capabilities)
        .auth_methods(vec![AuthMethod::Agent(auth)])
        .agent_info(Implementation::new("hearth", env!("CARGO_PKG_VERSION")).title("Hearth"))
}

/// The credential comes from the environment or the host, so there is nothing to log in
/// to: succeed when it is present, else explain where it goes.
pub fn authenticate(call: Call, raw: Value) {
    let request: AuthenticateRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return call.respond(Err(e)),
    };
    let outcome = if &*request.method_id.0 != OPENAI_AUTH_METHOD {
        Err(RpcError::invalid_params(format!(
            "unknown auth method `{}`",
            request.method_id.0
        )))
    } else if call.shared().provider.has_credential() {
        Ok(json!({}))
    } else {
        Err(RpcError::auth_required(credential_hint()))
    };
    call.respond(outcome)
}
