//! `initialize` and `authenticate`.

use std::sync::LazyLock;
use std::sync::atomic::Ordering;

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::SessionAdditionalDirectoriesCapabilities;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, Implementation,
    InitializeRequest, InitializeResponse, McpCapabilities, PromptCapabilities,
    SessionCapabilities, SessionCloseCapabilities, SessionDeleteCapabilities,
    SessionForkCapabilities, SessionListCapabilities, SessionResumeCapabilities,
    SessionSystemPromptCapabilities, SessionTitleCapabilities,
};
use serde_json::json;
use serde_json::value::RawValue;

use super::responder::{Responder, params};
use super::wire;
use crate::io::LocalIo;
use crate::llm::Providers;
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;

/// One auth method per provider: `(method id, provider, name)`. The credential comes from
/// the environment or from the host's config.
const AUTH_METHODS: [(&str, &str, &str); 2] = [
    ("openai-api-key", "openai", "OpenAI-compatible API key"),
    ("anthropic-api-key", "anthropic", "Anthropic API key"),
];

/// Answers `protocolVersion: 1` whatever was asked (we speak only v1; the client decides),
/// and advertises only what works. The client's capabilities choose its connection (what it
/// is shown, which workspace backend serves it); a second `initialize` is answered the same
/// way and replaces it.
pub fn initialize(responder: Responder, raw: Params<'_>) {
    let request: InitializeRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return responder.respond(Err(e)),
    };
    let client = responder.edge().client.clone();
    let local = LocalIo::new(responder.ctx().tool_deps().launcher.clone());
    let connection = wire::connection(&request.client_capabilities, client, local);
    responder.ctx().connect(connection);
    responder.edge().initialized.store(true, Ordering::Release);
    responder.reply_raw(&RESPONSE)
}

/// The answer depends on nothing the client sends, so it is serialized once per process:
/// `initialize` is the request whose round trip embedders measure first.
static RESPONSE: LazyLock<Box<RawValue>> = LazyLock::new(|| {
    serde_json::value::to_raw_value(&response()).expect("the initialize response serializes")
});

fn response() -> InitializeResponse {
    let sessions = SessionCapabilities::new()
        .list(SessionListCapabilities::new())
        .delete(SessionDeleteCapabilities::new())
        .resume(SessionResumeCapabilities::new())
        .close(SessionCloseCapabilities::new())
        .additional_directories(SessionAdditionalDirectoriesCapabilities::new())
        // `{}`: `append` only (`acp/system_prompt.rs`).
        .system_prompt(SessionSystemPromptCapabilities::new())
        // Both unstable: `acp/fork.rs`, `acp/title.rs`.
        .fork(SessionForkCapabilities::new())
        .title(SessionTitleCapabilities::new());
    // Hearth's extension methods, named as claude-agent-acp marks its `_session/rewind`.
    let extensions = json!({ "hearth": { "sessionRewind": {} } });
    let capabilities = AgentCapabilities::new()
        .meta(extensions.as_object().cloned())
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
        .session_capabilities(sessions);
    let auth = AUTH_METHODS
        .iter()
        .map(|(id, provider, name)| {
            AuthMethod::Agent(
                AuthMethodAgent::new(*id, *name).description(Providers::credential_hint(provider)),
            )
        })
        .collect();
    // `_session/steering` (`acp/steering.rs`), advertised where claude-agent-acp and
    // codex-acp advertise it.
    let steering = json!({ "steering": { "supported": true } });
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(capabilities)
        .auth_methods(auth)
        .agent_info(Implementation::new("hearth", env!("CARGO_PKG_VERSION")).title("Hearth"))
        .meta(steering.as_object().cloned())
}

/// The credential comes from the environment or the host, so there is nothing to log in
/// to: succeed when it is present, else explain where it goes.
pub fn authenticate(responder: Responder, raw: Params<'_>) {
    let request: AuthenticateRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return responder.respond(Err(e)),
    };
    let method = &*request.method_id.0;
    let outcome = match AUTH_METHODS.iter().find(|(id, _, _)| *id == method) {
        None => Err(RpcError::invalid_params(format!(
            "unknown auth method `{method}`"
        ))),
        Some((_, provider, _))
            if responder
                .ctx()
                .providers()
                .by_name(provider)
                .has_credential() =>
        {
            Ok(json!({}))
        }
        Some((_, provider, _)) => Err(RpcError::auth_required(Providers::credential_hint(
            provider,
        ))),
    };
    responder.respond(outcome)
}
