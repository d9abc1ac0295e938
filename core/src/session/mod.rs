//! Live sessions: their state and services, the per-session job queue, the prompt queue, and
//! the events they emit.

pub mod actor;
pub mod catch_up;
mod checkpoints;
pub mod events;
pub mod failure;
pub mod history;
pub mod mcp;
pub mod notice;
pub mod project;
pub mod recovery;
pub mod registry;
pub mod services;
pub mod steering;
pub mod turns;

use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use self::events::{EventSink, SessionEvent, Visibility};
use self::history::{Compaction, History};
use self::project::git::Repo;
use self::project::instructions::Instructions;
use self::project::skills::Skills;
use self::project::{Commands, Project};
use self::services::SessionServices;
use self::steering::Steering;
use crate::chat::{Message, ThoughtLevel};
use crate::config::Resolved;
use crate::context::EngineContext;
use crate::permissions::{Mode, Rule};
use crate::store::{Event, RuleRow, SessionRecord, StoreError, StoreOp, TitleSource, now};

/// The session's config values (the `configOptions` the client sees), stored as the
/// session row's `config` JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub model: String,
    pub mode: Mode,
    /// Used only when the model takes a thinking level.
    pub thought_level: ThoughtLevel,
    /// What the session's commands may touch (the `sandbox` option): only the user's
    /// `session/set_config_option` changes it, never the model.
    pub sandbox: crate::sandbox::Mode,
}

impl Settings {
    pub fn defaults(resolved: &Resolved) -> Settings {
        Settings {
            model: resolved.default_model.clone(),
            mode: resolved.default_mode,
            thought_level: ThoughtLevel::Medium,
            sandbox: resolved.sandbox.settings.mode,
        }
    }

    /// Stored values, each falling back to its default when missing, invalid or (for the
    /// model) no longer in the catalog.
    pub fn from_stored(stored: &Value, resolved: &Resolved) -> Settings {
        let defaults = Settings::defaults(resolved);
        let field = |name: &str| stored.get(name).cloned();
        Settings {
            model: field("model")
                .and_then(|m| m.as_str().map(str::to_string))
                .filter(|m| resolved.catalog.iter().any(|c| c.id == *m))
                .unwrap_or(defaults.model),
            mode: field("mode")
                .and_then(|m| serde_json::from_value(m).ok())
                .unwrap_or(defaults.mode),
            thought_level: field("thoughtLevel")
                .and_then(|t| serde_json::from_value(t).ok())
                .unwrap_or(defaults.thought_level),
            sandbox: field("sandbox")
                .and_then(|s| serde_json::from_value(s).ok())
                .unwrap_or(defaults.sandbox),
        }
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// What a live session knows about itself beyond its log.
#[derive(Debug, Clone)]
pub struct SessionState {
    pub cwd: String,
    pub additional_dirs: Vec<String>,
    pub title: Option<String>,
    /// Who named the session: a title the user set is never replaced by the agent's.
    pub title_source: Option<TitleSource>,
    pub settings: Settings,
    /// When the session was created (RFC 3339): its system prompt dates itself by this, so
    /// the prompt is the same after a restart.
    pub created_at: String,
    /// What the client asked to add to the system prompt (ACP `systemPrompt`, `append`).
    pub client_system_prompt: Option<String>,
}

impl SessionState {
    pub fn from_record(record: &SessionRecord, resolved: &Resolved) -> Self {
        SessionState {
            cwd: record.cwd.clone(),
            additional_dirs: record.additional_dirs.clone(),
            title: record.title.clone(),
            title_source: record.title_source,
            settings: Settings::from_stored(&record.config, resolved),
            created_at: record.created_at.clone(),
            client_system_prompt: record.client_system_prompt.clone(),
        }
    }
}

/// A live session: its state, its services, the model's context, and the sink its turns
/// emit to.
pub struct Session {
    pub id: Arc<str>,
    state: Mutex<SessionState>,
    history: Mutex<History>,
    ctx: Arc<EngineContext>,
    services: Arc<SessionServices>,
    project: Arc<Project>,
    steering: Steering,
    /// What the session's model requests cost since it went live, where the model has a
    /// price (`config/price.rs`).
    spent: Mutex<f64>,
    kind: Kind,
    /// What the subagents of its turn spent, for the prompt's response (a child adds to its
    /// root's).
    delegated: Mutex<crate::tools::Tally>,
}

/// A session is the client's, or a subagent's that a `task` call of it runs.
pub enum Kind {
    Root,
    /// Its context lives in memory for the child's run and is not logged (the parent's log
    /// keeps what the client saw of it); its system prompt is fixed when it starts, and the
    /// project instructions are not re-read.
    Child {
        system: Arc<str>,
        /// The session whose `task` call runs it: its mode, read at each call, bounds the
        /// child's.
        parent: Arc<Session>,
    },
}

impl Session {
    pub fn new(
        id: Arc<str>,
        state: SessionState,
        history: History,
        ctx: Arc<EngineContext>,
        services: Arc<SessionServices>,
        project: Project,
    ) -> Self {
        Session {
            id,
            state: Mutex::new(state),
            history: Mutex::new(history),
            ctx,
            services,
            project: Arc::new(project),
            steering: Steering::default(),
            spent: Mutex::new(0.0),
            kind: Kind::Root,
            delegated: Mutex::default(),
        }
    }

    /// A subagent of this session: the same id (the one its client knows, that approvals,
    /// the workspace and the file checkpoints go by), project and store, its own `services`
    /// (a narrowing of these), `settings` and context, that opens with `system`.
    pub fn child(
        self: &Arc<Self>,
        services: Arc<SessionServices>,
        settings: Settings,
        system: Arc<str>,
    ) -> Session {
        let mut state = self.state().clone();
        state.settings = settings;
        Session {
            id: self.id.clone(),
            state: Mutex::new(state),
            history: Mutex::new(History::default()),
            ctx: self.ctx.clone(),
            services,
            project: self.project.clone(),
            steering: Steering::default(),
            spent: Mutex::new(0.0),
            delegated: Mutex::default(),
            kind: Kind::Child {
                system,
                parent: self.clone(),
            },
        }
    }

    /// A subagent's system prompt; `None` for the client's session.
    pub fn child_system(&self) -> Option<Arc<str>> {
        match &self.kind {
            Kind::Root => None,
            Kind::Child { system, .. } => Some(system.clone()),
        }
    }

    /// Counts what a subagent of its turn spent, on the client's session.
    pub fn add_delegated(&self, spent: crate::tools::Tally) {
        match &self.kind {
            Kind::Root => self
                .delegated
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .add(spent),
            Kind::Child { parent, .. } => parent.add_delegated(spent),
        }
    }

    /// What the subagents of the turn that just ended spent; the count starts over.
    pub fn take_delegated(&self) -> crate::tools::Tally {
        std::mem::take(&mut *self.delegated.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The permission mode its calls run under: its own, and for a subagent never looser than
    /// its parent's as it is now (switching the session to `plan` restrains running children).
    pub fn mode(&self) -> Mode {
        let own = self.state().settings.mode;
        match &self.kind {
            Kind::Root => own,
            Kind::Child { parent, .. } => own.stricter(parent.mode()),
        }
    }

    /// What the session spent since it went live.
    pub fn spent(&self) -> f64 {
        *self.spent.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds `amount` to what the session spent.
    pub fn spend(&self, amount: f64) {
        *self.spent.lock().unwrap_or_else(|p| p.into_inner()) += amount;
    }

    pub fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the user sent while a turn runs (see `steering.rs`).
    pub fn steering(&self) -> &Steering {
        &self.steering
    }

    /// The model's context, in memory (see `history.rs`).
    pub fn history(&self) -> MutexGuard<'_, History> {
        self.history.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Logs a rewrite of the model's context and applies it (a restart applies it again).
    pub async fn compact(&self, compaction: &Compaction) -> Result<(), StoreError> {
        self.recall().await?;
        self.history().apply(compaction);
        self.log_for_model(compaction.to_model());
        Ok(())
    }

    /// Brings back into memory the messages of the context that only the log and their
    /// encoding kept (`History::settle`), for what reads them all: a compaction, `/context`,
    /// a request to a provider whose encoding the session does not hold. Read as a restart
    /// reads them, after every queued write.
    pub async fn recall(&self) -> Result<(), StoreError> {
        if self.history().is_whole() {
            return Ok(());
        }
        let mut whole = History::default();
        let log = self.ctx.log();
        (self.ctx)
            .for_each_context_event(&self.id, |event| whole.observe(&event, log))
            .await?;
        self.history().take_back(whole);
        Ok(())
    }

    /// Logs what only the model needs (`History::observe` reads it back on a restart).
    fn log_for_model(&self, model: Value) {
        if self.child_system().is_some() {
            return;
        }
        self.ctx.write(self.append(Event {
            update: None,
            model: Some(model),
        }));
    }

    pub fn ctx(&self) -> &Arc<EngineContext> {
        &self.ctx
    }

    pub fn services(&self) -> &SessionServices {
        &self.services
    }

    /// The repository the session was in when it came up.
    pub fn repo(&self) -> Option<&Repo> {
        self.project.repo.as_ref()
    }

    pub fn instructions(&self) -> &Instructions {
        &self.project.instructions
    }

    /// The session's skills: those its system prompt lists, and those it has now.
    pub fn skills(&self) -> &Skills {
        &self.project.skills
    }

    /// What the model is offered of the session's tools now: every one of its services', but
    /// `skill` while the session has no skill to load and `exit_plan_mode` outside plan mode
    /// (there is no plan mode to leave).
    pub fn tool_specs(&self) -> Vec<crate::chat::ToolSpec> {
        let mut specs = self.services.tool_specs();
        if self.project.skills.shelf().get().is_empty() {
            specs.retain(|spec| spec.name != crate::tools::SKILL);
        }
        if self.state().settings.mode != crate::permissions::Mode::Plan {
            specs.retain(|spec| spec.name != crate::tools::EXIT_PLAN_MODE);
        }
        specs
    }

    /// The session's custom commands and the command list last told to the client.
    pub fn commands(&self) -> MutexGuard<'_, Commands> {
        self.project
            .commands
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces what the client adds to the system prompt, and stores it with the session.
    /// The next request renders the system prompt anew.
    pub fn set_client_system_prompt(&self, text: String) {
        self.state().client_system_prompt = Some(text.clone());
        self.history().unfix_system();
        self.ctx.write(StoreOp::SetClientSystemPrompt {
            session_id: self.id.clone(),
            text,
        });
    }

    /// Replaces the settings, persists them, and tells the client (logged, so a replay shows
    /// the same changes).
    pub fn apply_settings(&self, settings: Settings) {
        let mode_changed = settings.mode != self.state().settings.mode;
        self.state().settings = settings.clone();
        self.ctx.write(StoreOp::SetConfig {
            session_id: self.id.clone(),
            config: settings.to_value(),
        });
        let mode = settings.mode;
        self.emit(SessionEvent::ConfigChanged(settings), Visibility::Live);
        if mode_changed {
            self.emit(SessionEvent::ModeChanged(mode), Visibility::Live);
        }
    }

    /// The client re-sends the workspace roots on load and resume; they replace the stored
    /// ones (a project may have moved since), and the system prompt that names them.
    pub fn adopt_dirs(&self, cwd: String, additional_dirs: Vec<String>) {
        let mut state = self.state();
        if state.cwd == cwd && state.additional_dirs == additional_dirs {
            return;
        }
        self.history().unfix_system();
        state.cwd.clone_from(&cwd);
        state.additional_dirs.clone_from(&additional_dirs);
        self.ctx.write(StoreOp::SetDirs {
            session_id: self.id.clone(),
            cwd,
            additional_dirs,
        });
    }

    /// Names the session and stores who did, unless the rule says the agent may not: it
    /// names a session once, from the first prompt that yields a title (a fork, from the
    /// fork's own first prompt, replacing the title it inherited), and never replaces a
    /// title the user set. Returns whether the title was taken; whoever calls it tells the
    /// client (the turn through its sink, `session/set_title` through the session).
    pub fn set_title(&self, title: String, source: TitleSource) -> bool {
        let mut state = self.state();
        let agent_may = matches!(state.title_source, None | Some(TitleSource::Fork));
        if source == TitleSource::Agent && !agent_may {
            return false;
        }
        state.title = Some(title.clone());
        state.title_source = Some(source);
        // Under the state's lock, so two namings reach the store in the order they won it.
        self.ctx.write(StoreOp::SetTitle {
            session_id: self.id.clone(),
            title,
            source,
        });
        true
    }

    /// The "always" answers stored for `workspace`; none (so every call asks) if the store
    /// cannot be read.
    pub async fn rules(&self, workspace: &str) -> Vec<Rule> {
        match self.ctx.rules(workspace).await {
            Ok(rows) => rows
                .into_iter()
                .map(|row| Rule {
                    tool: row.tool,
                    pattern: row.pattern,
                    allow: row.allow,
                })
                .collect(),
            Err(e) => {
                tracing::error!(error = %e, "cannot read permission rules; asking");
                Vec::new()
            }
        }
    }

    /// Stores an "always" answer for `workspace`, replacing an earlier one for the same calls.
    pub fn remember_rule(&self, workspace: &str, rule: Rule) {
        let rule = RuleRow {
            tool: rule.tool,
            pattern: rule.pattern,
            allow: rule.allow,
        };
        self.ctx.write(StoreOp::AddRule {
            workspace: workspace.to_string(),
            rule,
        });
    }

    /// Records in the store that this engine runs a turn of the session, or no longer does:
    /// what tells another engine restoring it that the turn is live, or — once this engine is
    /// gone — interrupted (`recovery.rs`).
    pub fn mark_running(&self, running: bool) {
        self.ctx.write(StoreOp::TurnRunning {
            session_id: self.id.clone(),
            engine: self.ctx.turn_owner(),
            running,
        });
    }

    /// Takes the stored row's state (title, settings, roots, the client's system prompt
    /// text) and the context and cost read back from the log, as the session comes up after
    /// a restart: another process changed it since this one read it (`catch_up.rs`).
    pub fn take_stored(&self, state: SessionState, history: History, spent: f64) {
        *self.state() = state;
        *self.history() = history;
        *self.spent.lock().unwrap_or_else(|p| p.into_inner()) = spent;
    }

    fn append(&self, event: Event) -> StoreOp {
        StoreOp::Append {
            session_id: self.id.clone(),
            event,
            at: now(),
        }
    }
}

impl EventSink for Session {
    /// Logs and sends what the client is shown of `event` (the connection's wire may show a
    /// stand-in, or nothing), in the log's format.
    fn emit(&self, event: SessionEvent, visibility: Visibility) {
        let wire = self.ctx.wire();
        let Some(event) = wire.present(event) else {
            return;
        };
        // A notice describes its moment and is never kept, whatever was asked; a message
        // standing in for a failure's notice is part of the conversation, and is.
        let visibility = match event {
            SessionEvent::Notice { .. } | SessionEvent::TurnFailed { .. } => Visibility::Transient,
            _ => visibility,
        };
        let log = self.ctx.log();
        // A prompt block is read by the model too; nothing else the client sees is.
        let for_model = matches!(event, SessionEvent::UserChunk { .. });
        let update = log.encode(event);
        if visibility == Visibility::Transient {
            return self.ctx.send_frame(wire.frame(&self.id, &update));
        }
        let frame = (visibility == Visibility::Live).then(|| wire.frame(&self.id, &update));
        let row = Event::update(update);
        if for_model {
            // Read back as a restart reads it, so that both build the same context.
            self.history().observe(&row, log);
        }
        let op = self.append(row);
        match frame {
            Some(frame) => self.ctx.write_then_send(op, frame),
            None => self.ctx.write(op),
        }
    }

    fn remember(&self, message: Message) {
        let model = json!({ "message": &message });
        self.history().push(message);
        self.log_for_model(model);
    }
}
