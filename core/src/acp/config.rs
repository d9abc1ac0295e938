//! Session config options — model, mode, thought level, sandbox — and the legacy modes API kept in
//! sync with them (`session/set_config_option`, `session/set_mode`).

use agent_client_protocol_schema::v1::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse,
};

use super::responder::Responder;
use super::{SessionParams, on_session};
use crate::chat::ThoughtLevel;
use crate::config::{ModelInfo, model_thinks};
use crate::context::EngineContext;
use crate::permissions::Mode;
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;
use crate::sandbox;
use crate::session::{Session, Settings};

pub const MODEL: &str = "model";
pub const MODE: &str = "mode";
pub const THOUGHT_LEVEL: &str = "thought_level";
/// What the session's commands may touch. A category of its own (`_` for a custom one): it
/// is not a mode, the modes decide when to ask.
pub const SANDBOX: &str = "sandbox";
const SANDBOX_CATEGORY: &str = "_sandbox";

fn sandbox_name(mode: sandbox::Mode) -> (&'static str, &'static str) {
    match mode {
        sandbox::Mode::ReadOnly => ("Read-only", "Commands write nothing but their temp dir"),
        sandbox::Mode::WorkspaceWrite => (
            "Workspace write",
            "Commands write the workspace and their temp dir",
        ),
        sandbox::Mode::Off => ("Off", "Commands run with all of your rights"),
    }
}

const LEVELS: [(ThoughtLevel, &str, &str); 4] = [
    (ThoughtLevel::Off, "off", "Off"),
    (ThoughtLevel::Low, "low", "Low"),
    (ThoughtLevel::Medium, "medium", "Medium"),
    (ThoughtLevel::High, "high", "High"),
];

/// The complete option list for these settings, in priority order.
pub fn options(settings: &Settings, catalog: &[ModelInfo]) -> Vec<SessionConfigOption> {
    let models = catalog
        .iter()
        .map(|m| SessionConfigSelectOption::new(m.id.clone(), m.name.clone()))
        .collect::<Vec<_>>();
    let modes = Mode::ALL
        .iter()
        .map(|m| SessionConfigSelectOption::new(m.id(), m.name()).description(m.description()))
        .collect::<Vec<_>>();
    let mut options = vec![
        SessionConfigOption::select(MODEL, "Model", settings.model.clone(), models)
            .category(SessionConfigOptionCategory::Model),
        SessionConfigOption::select(MODE, "Mode", settings.mode.id(), modes)
            .category(SessionConfigOptionCategory::Mode),
    ];
    if model_thinks(catalog, &settings.model) {
        let levels = LEVELS
            .iter()
            .map(|(_, id, name)| SessionConfigSelectOption::new(*id, *name))
            .collect::<Vec<_>>();
        options.push(
            SessionConfigOption::select(
                THOUGHT_LEVEL,
                "Thinking",
                level_id(settings.thought_level),
                levels,
            )
            .category(SessionConfigOptionCategory::ThoughtLevel),
        );
    }
    let sandboxes = sandbox::Mode::ALL
        .iter()
        .map(|m| {
            let (name, description) = sandbox_name(*m);
            SessionConfigSelectOption::new(m.as_str(), name).description(description)
        })
        .collect::<Vec<_>>();
    options.push(
        SessionConfigOption::select(SANDBOX, "Sandbox", settings.sandbox.as_str(), sandboxes)
            .category(SessionConfigOptionCategory::Other(SANDBOX_CATEGORY.into())),
    );
    options
}

/// The legacy `modes` view of the same setting.
pub fn modes(settings: &Settings) -> SessionModeState {
    let available = Mode::ALL
        .iter()
        .map(|m| SessionMode::new(m.id(), m.name()).description(m.description()))
        .collect();
    SessionModeState::new(settings.mode.id(), available)
}

fn level_id(level: ThoughtLevel) -> &'static str {
    LEVELS
        .iter()
        .find(|(l, _, _)| *l == level)
        .map_or("medium", |(_, id, _)| id)
}

pub fn set_config_option(responder: Responder, raw: Params<'_>) {
    on_session(
        responder,
        raw,
        |responder, request: SetSessionConfigOptionRequest, live| async move {
            let Some(value) = request.value.as_value_id().map(|v| v.0.to_string()) else {
                return responder.respond(Err(RpcError::invalid_params(
                    "`value`: every Hearth option is a select; send a value id",
                )));
            };
            let ctx = responder.ctx();
            let outcome =
                change(ctx, &live.session, &request.config_id.0, &value).map(|settings| {
                    SetSessionConfigOptionResponse::new(options(&settings, ctx.catalog()))
                });
            responder.reply(outcome);
        },
    );
}

pub fn set_mode(responder: Responder, raw: Params<'_>) {
    on_session(
        responder,
        raw,
        |responder, request: SetSessionModeRequest, live| async move {
            let outcome = change(responder.ctx(), &live.session, MODE, &request.mode_id.0)
                .map(|_| SetSessionModeResponse::new());
            responder.reply(outcome);
        },
    );
}

/// Validates one change and applies it to the session.
fn change(
    ctx: &EngineContext,
    session: &Session,
    id: &str,
    value: &str,
) -> Result<Settings, RpcError> {
    let mut settings = session.state().settings.clone();
    let unknown =
        || RpcError::invalid_params(format!("`value`: `{value}` is not a choice of `{id}`"));
    match id {
        MODEL => {
            if ctx.model(value).is_none() {
                return Err(unknown());
            }
            settings.model = value.to_string();
        }
        MODE => settings.mode = Mode::parse(value).ok_or_else(unknown)?,
        SANDBOX => settings.sandbox = sandbox::Mode::parse(value).ok_or_else(unknown)?,
        THOUGHT_LEVEL if ctx.model_thinks(&settings.model) => {
            settings.thought_level = LEVELS
                .iter()
                .find(|(_, v, _)| *v == value)
                .map(|(l, _, _)| *l)
                .ok_or_else(unknown)?;
        }
        _ => {
            return Err(RpcError::invalid_params(format!(
                "`configId`: no option `{id}`"
            )));
        }
    }
    session.apply_settings(settings.clone());
    tracing::debug!(session = %session.id, option = id, value, "config changed");
    Ok(settings)
}

impl SessionParams for SetSessionConfigOptionRequest {
    fn session_id(&self) -> &str {
        &self.session_id.0
    }
}

impl SessionParams for SetSessionModeRequest {
    fn session_id(&self) -> &str {
        &self.session_id.0
    }
}
