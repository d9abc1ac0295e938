//! `initialize` and `authenticate`.

use std::sync::LazyLock;
use std::sync::atomic::Ordering;

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::SessionAdditionalDirectoriesCapabilities;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthMethodTerminal, AuthenticateRequest,
    Implementation, InitializeRequest, InitializeResponse, McpCapabilities, PromptCapabilities,
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

/// The `terminal` method: the client runs the agent again with `auth` appended, and the user
/// stores a key with `hearth auth` (cli/src/auth.rs).
const TERMINAL_METHOD: &str = "hearth-auth";

/// One auth method per provider: `(method id, provider, name)`. The credential comes from
/// the environment, from the host's config, or from `hearth auth`.
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
    let terminal = AuthMethodTerminal::new(TERMINAL_METHOD, "Sign in with an API key")
        .description("Runs `hearth auth` in a terminal: pick a provider, paste its key")
        .args(vec!["auth".to_string()]);
    let auth = AUTH_METHODS
        .iter()
        .map(|(id, provider, name)| {
            AuthMethod::Agent(
                AuthMethodAgent::new(*id, *name)
                    .description(Providers::credential_hint(provider))
                    .meta(legacy_terminal_auth(provider)),
            )
        })
        .chain(std::iter::once(AuthMethod::Terminal(terminal)))
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

/// Stable Zed (the `terminal` type is behind its beta flag) runs `_meta["terminal-auth"]` of
/// an agent-type method instead: `{label, command, args, env}`, `command` being the agent's
/// own binary. An embedding host's process is not `hearth`, so it gets none.
fn legacy_terminal_auth(provider: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let exe = std::env::current_exe().ok()?;
    let hearth = exe
        .file_stem()
        .is_some_and(|stem| stem.eq_ignore_ascii_case("hearth"));
    let meta = json!({ "terminal-auth": {
        "label": "hearth auth",
        "command": exe.to_string_lossy(),
        "args": ["auth", "--provider", provider],
        "env": {},
    }});
    hearth.then(|| meta.as_object().cloned()).flatten()
}

/// The credential comes from the environment, the host or the key the user stored with
/// `hearth auth` (read when the process started): succeed when it is present, else explain
/// where it goes. The terminal method succeeds when any provider has one.
pub fn authenticate(responder: Responder, raw: Params<'_>) {
    let request: AuthenticateRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return responder.respond(Err(e)),
    };
    let method = &*request.method_id.0;
    let providers = responder.ctx().providers();
    let outcome = match AUTH_METHODS.iter().find(|(id, _, _)| *id == method) {
        None if method == TERMINAL_METHOD => {
            if AUTH_METHODS
                .iter()
                .any(|(_, provider, _)| providers.by_name(provider).has_credential())
            {
                Ok(json!({}))
            } else {
                Err(RpcError::auth_required(
                    "No key is stored: run `hearth auth` in a terminal, then restart the agent",
                ))
            }
        }
        None => Err(RpcError::invalid_params(format!(
            "unknown auth method `{method}`"
        ))),
        Some((_, provider, _)) if providers.by_name(provider).has_credential() => Ok(json!({})),
        Some((_, provider, _)) => Err(RpcError::auth_required(Providers::credential_hint(
            provider,
        ))),
    };
    responder.respond(outcome)
}
