//! Session config options — model, mode, thought level — and the legacy modes API kept in
//! sync with them (`session/set_config_option`, `session/set_mode`).

use agent_client_protocol_schema::v1::{
    ConfigOptionUpdate, CurrentModeUpdate, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigSelectOption, SessionMode, SessionModeState, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};

use super::SessionParams;
use super::call::Call;
use crate::config::ModelInfo;
use crate::engine::Shared;
use crate::llm::ThoughtLevel;
use crate::permissions::Mode;
use crate::rpc::RpcError;
use crate::session::{Session, Settings};
use crate::store::StoreOp;

pub const MODEL: &str = "model";
pub const MODE: &str = "mode";
pub const THOUGHT_LEVEL: &str = "thought_level";

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
    if model_thinks(&settings.model, catalog) {
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

pub fn model_thinks(model: &str, catalog: &[ModelInfo]) -> bool {
    catalog.iter().any(|m| m.id == model && m.thinking)
}

fn level_id(level: ThoughtLevel) -> &'static str {
    LEVELS
        .iter()
        .find(|(l, _, _)| *l == level)
        .map_or("medium", |(_, id, _)| id)
}

pub fn set_config_option(session: &Session, call: Call, request: SetSessionConfigOptionRequest) {
    let shared = call.shared().clone();
    let Some(value) = request.value.as_value_id().map(|v| v.0.to_string()) else {
        return call.respond(Err(RpcError::invalid_params(
            "`value`: every Hearth option is a select; send a value id",
        )));
    };
    let outcome = change(&shared, session, &request.config_id.0, &value)
        .map(|settings| SetSessionConfigOptionResponse::new(options(&settings, &shared.catalog)));
    call.reply(outcome);
}

pub fn set_mode(session: &Session, call: Call, request: SetSessionModeRequest) {
    let shared = call.shared().clone();
    let outcome =
        change(&shared, session, MODE, &request.mode_id.0).map(|_| SetSessionModeResponse::new());
    call.reply(outcome);
}

/// Validates and applies one change, persists the settings, and tells the client (logged,
/// so a replay shows the same changes).
fn change(shared: &Shared, session: &Session, id: &str, value: &str) -> Result<Settings, RpcError> {
    let mut settings = session.state().settings.clone();
    let unknown =
        || RpcError::invalid_params(format!("`value`: `{value}` is not a choice of `{id}`"));
    match id {
        MODEL => {
            if !shared.catalog.iter().any(|m| m.id == value) {
                return Err(unknown());
            }
            settings.model = value.to_string();
        }
        MODE => settings.mode = Mode::parse(value).ok_or_else(unknown)?,
        THOUGHT_LEVEL if model_thinks(&settings.model, &shared.catalog) => {
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
    let mode_changed = settings.mode != session.state().settings.mode;
    session.state().settings = settings.clone();
    let op = StoreOp::SetConfig {
        session_id: session.id.clone(),
        config: settings.to_value(),
    };
    shared.outbox.write(op, None);
    let update = ConfigOptionUpdate::new(options(&settings, &shared.catalog));
    session.record(shared, SessionUpdate::ConfigOptionUpdate(update));
    if mode_changed {
        session.record(
            shared,
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(settings.mode.id())),
        );
    }
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
