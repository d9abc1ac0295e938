//! `initialize` and `authenticate`.

use std::path::Path;
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

use super::responder::{Responder, params};
use super::wire;
use crate::config::{ProviderName, TerminalSignIn};
use crate::context::EngineContext;
use crate::io::LocalIo;
use crate::io::process::sandbox_backend;
use crate::llm::Providers;
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;
use crate::sandbox::{Mode, Network, Settings};

/// The `terminal` method: the client runs the agent again with `auth` appended (`hearth acp …
/// auth`, cli/src/main.rs), and the user stores a key as with `hearth auth` (cli/src/auth.rs).
/// Offered only to a client that says it can (`clientCapabilities.auth.terminal`).
const TERMINAL_METHOD: &str = "hearth-auth";

/// One auth method per provider: `(method id, provider, name)`. The credential comes from
/// the environment, from the host's config, or from `hearth auth`.
const AUTH_METHODS: [(&str, ProviderName, &str); 2] = [
    (
        "openai-api-key",
        ProviderName::Openai,
        "OpenAI-compatible API key",
    ),
    (
        "anthropic-api-key",
        ProviderName::Anthropic,
        "Anthropic API key",
    ),
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
    let edge = responder.edge().clone();
    let terminal = request.client_capabilities.auth.terminal;
    let answer = edge.initialize_answer[usize::from(terminal)].get_or_init(|| {
        let ctx = responder.ctx();
        let answer = response(ctx.sign_in(), &ctx.resolved().sandbox.settings, terminal);
        serde_json::value::to_raw_value(&answer).expect("the initialize response serializes")
    });
    responder.reply_raw(answer)
}

fn response(
    sign_in: Option<&dyn TerminalSignIn>,
    sandbox: &Settings,
    terminal: bool,
) -> InitializeResponse {
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
    let terminal = terminal.then(|| {
        AuthMethodTerminal::new(TERMINAL_METHOD, "Sign in with an API key")
            .description("Runs `hearth auth` in a terminal: pick a provider, paste its key")
            .args(vec!["auth".to_string()])
    });
    let auth = AUTH_METHODS
        .iter()
        .map(|(id, provider, name)| {
            AuthMethod::Agent(
                AuthMethodAgent::new(*id, *name)
                    .description(Providers::credential_hint(*provider))
                    .meta(sign_in.map(|s| legacy_terminal_auth(s.program(), *provider))),
            )
        })
        .chain(terminal.map(AuthMethod::Terminal))
        .collect();
    // `_session/steering` (`acp/steering.rs`), advertised where claude-agent-acp and
    // codex-acp advertise it.
    let meta = json!({
        "steering": { "supported": true },
        "hearth": { "sandbox": sandbox_status(sandbox, sandbox_backend(sandbox).as_deref()) },
    });
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(capabilities)
        .auth_methods(auth)
        .agent_info(Implementation::new("hearth", env!("CARGO_PKG_VERSION")).title("Hearth"))
        .meta(meta.as_object().cloned())
}

/// `_meta.hearth.sandbox`: what confines commands — the backend ("landlock ABI 7 + seccomp";
/// "none" when the user switched the sandbox off; "unavailable" where nothing on this
/// machine confines, and then `accept_edits` asks before commands as `ask`
/// does), the configured mode (a session may change its own) and the network setting.
fn sandbox_status(settings: &Settings, backend: Option<&str>) -> serde_json::Value {
    let backend = match (settings.mode, backend) {
        (Mode::Off, _) => "none",
        (_, None) => "unavailable",
        (_, Some(backend)) => backend,
    };
    let network = match &settings.network {
        Network::Off => json!(false),
        Network::On => json!(true),
        Network::Allow(hosts) => json!(hosts),
    };
    json!({ "backend": backend, "mode": settings.mode.as_str(), "network": network })
}

/// Stable Zed (the `terminal` type is behind its beta flag) runs `_meta["terminal-auth"]` of
/// an agent-type method instead: `{label, command, args, env}`, `command` being the agent's
/// own binary — which only a host with `hearth auth` has (`TerminalSignIn::program`), so an
/// embedding host's answer carries none.
fn legacy_terminal_auth(
    program: &Path,
    provider: ProviderName,
) -> serde_json::Map<String, serde_json::Value> {
    let meta = json!({ "terminal-auth": {
        "label": "hearth auth",
        "command": program.to_string_lossy(),
        "args": ["auth", "--provider", provider.as_str()],
        "env": {},
    }});
    meta.as_object().cloned().unwrap_or_default()
}

/// The credential comes from the environment, the host or the key the user stored with
/// `hearth auth`: the store is read again first, so a sign-in since start counts. An agent
/// method succeeds when its provider is usable (a key, or a server of the user's own); the
/// terminal method when a key is in effect for any provider. Else the error says where the
/// key goes.
pub fn authenticate(responder: Responder, raw: Params<'_>) {
    let request: AuthenticateRequest = match params(raw) {
        Ok(r) => r,
        Err(e) => return responder.respond(Err(e)),
    };
    let method = request.method_id.0.to_string();
    let ctx = responder.ctx().clone();
    if ctx.sign_in().is_none() {
        let outcome = outcome(&ctx, &method);
        return responder.respond(outcome);
    }
    // The OS credential store may take a while to answer: off the caller's thread.
    ctx.runtime().clone().spawn_blocking(move || {
        ctx.refresh_stored_keys();
        responder.respond(outcome(&ctx, &method));
    });
}

fn outcome(ctx: &EngineContext, method: &str) -> Result<serde_json::Value, RpcError> {
    let providers = ctx.providers();
    match AUTH_METHODS.iter().find(|(id, _, _)| *id == method) {
        None if method == TERMINAL_METHOD => {
            if ProviderName::ALL.into_iter().any(|p| providers.has_key(p)) {
                Ok(json!({}))
            } else {
                Err(RpcError::auth_required(no_key_message(ctx.sign_in())))
            }
        }
        None => Err(RpcError::invalid_params(format!(
            "unknown auth method `{method}`"
        ))),
        Some((_, provider, _)) if providers.by_name(*provider).has_credential() => Ok(json!({})),
        Some((_, provider, _)) => Err(RpcError::auth_required(Providers::credential_hint(
            *provider,
        ))),
    }
}

fn no_key_message(sign_in: Option<&dyn TerminalSignIn>) -> &'static str {
    match sign_in {
        Some(_) => "No key is stored: run `hearth auth` in a terminal, then authenticate again",
        None => {
            "No API key is set: the host passes one in its config (providers.<name>.apiKey) or the environment"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_status_names_the_backend_or_why_there_is_none() {
        let on = Settings::default();
        let status = sandbox_status(&on, Some("landlock ABI 7 + seccomp"));
        assert_eq!(
            status,
            json!({"backend": "landlock ABI 7 + seccomp", "mode": "workspace-write", "network": false})
        );
        assert_eq!(sandbox_status(&on, None)["backend"], "unavailable");
        let off = Settings {
            mode: Mode::Off,
            network: Network::Allow(vec!["example.com".into()]),
            ..Settings::default()
        };
        let status = sandbox_status(&off, Some("landlock ABI 7 + seccomp"));
        assert_eq!(
            status,
            json!({"backend": "none", "mode": "off", "network": ["example.com"]})
        );
    }
}
