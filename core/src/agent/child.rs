//! Subagents (`tools::ChildTurns`, for the `task` tool): a child is a turn loop of its own
//! (`converse`, the parent's very loop) on a child `Session` — a fresh context opening with
//! its own system prompt (`system_prompt::for_child`), the parent's tools narrowed to its
//! agent's (`SessionServices::for_child`: the same MCP and language servers, not restarted),
//! its agent's mode tightened to the parent's when that is stricter, and its agent's model.
//!
//! Its events reach the client through [`ChildSink`], on the parent's session: its tool calls
//! as they are, wrapped in `SessionEvent::Child` (so `acp/updates.rs` marks them with the
//! `task` call as their parent); its text as the `task` call's progress, never as the
//! parent's message; its usage into the call's tally, never into the parent's context meter.
//! What the parent logs of it is what `session/load` replays, and what crash recovery closes.
//!
//! For a client that advertises `subagents` the sink also reports the child's state
//! (`SessionEvent::SubagentState`, `child_state.rs`: running, requires_action while a
//! permission request or an MCP server's question of its calls waits, idle with its stop
//! reason and usage) and its text as chunks of its own; the wire
//! (`acp/wire/v1.rs`) announces it with `subagent_update` and puts its frames and permission
//! requests on its own session id, and `session/cancel` on that id cancels it alone
//! (`Sessions::adopt_child`). Other clients see none of that: never logged, the state and the
//! chunks are dropped by their wire, and the log keeps the flat form every client can replay.
//! A `session/load` by a client with `subagents` puts the child's logged calls back on its
//! own session id, announced first (with no state: the log keeps none); its text and states
//! are not in the log, so they are not replayed.
//!
//! The child session has the parent's id (the one the client knows), so its permission asks,
//! its workspace requests and its file checkpoints are the parent's: the rules and "always"
//! grants are shared, and its edits belong to the delegating turn's checkpoint (`/undo`
//! reverts them). Its id of its own, `childSessionId`, names it in the frames.
//!
//! Limits (`config.subagents`): children of one session run at most `maxConcurrent` at once
//! at each depth (a semaphore per depth per client session, shared down the tree: a child
//! holds its slot while it waits for its own children, so one pool for every depth would let
//! the children of a full level wait forever for a slot); each stops after `maxTurns`
//! model requests or `timeoutSecs`; a child delegates further only when its agent file lists
//! `task` and the depth allows. A child that fails, is cancelled or hits a limit is an error
//! result for the parent model, with the child's last text; the parent turn goes on.
//! Cancelling the parent cancels every child (their tokens are the call's children).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::child_state::ChildStates;
use super::{Setup, StopReason, TurnError, check_credential, converse, system_prompt};
use crate::chat::{AssistantPart, Message};
use crate::config::SubagentLimits;
use crate::ids::new_id;
use crate::question::Waiting;
use crate::session::Session;
use crate::session::events::{ChildLink, ChildState, EventSink, SessionEvent, Visibility};
use crate::tools::{AgentType, CallReport, ChildAnswer, ChildJob, ChildTurns, Tally, ToolError};

/// The most of a child's text its `task` call shows while it runs (the tail).
const MAX_PROGRESS_BYTES: usize = 4 * 1024;

/// The least time between two reports of a streaming answer's progress. Each report carries
/// the whole tail, so one a chunk would send a long answer's text hundreds of times over;
/// the text held back is reported when the answer ends or the model falls silent.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// The children of one session's turn.
pub struct Children {
    parent: Arc<Session>,
    /// The delegating turn's user message (the children's edits are checkpointed under it).
    prompt_id: String,
    /// How deep the children it starts are (1: children of the client's session).
    depth: u32,
    /// The child session these children's parent is, below the first depth.
    delegating: Option<String>,
    limits: SubagentLimits,
    /// Children running at once, for the whole tree of one client session: one semaphore per
    /// depth, the first for depth 1.
    slots: Arc<[Semaphore]>,
}

impl Children {
    /// The children of a turn of the client's session, if delegation is on.
    pub fn of(session: &Arc<Session>, prompt_id: &str) -> Option<Arc<dyn ChildTurns>> {
        let limits = session.ctx().config().subagent_limits();
        (limits.max_depth > 0).then(|| {
            Arc::new(Children {
                parent: session.clone(),
                prompt_id: prompt_id.to_string(),
                depth: 1,
                delegating: None,
                limits,
                slots: (0..limits.max_depth)
                    .map(|_| Semaphore::new(limits.max_concurrent))
                    .collect(),
            }) as Arc<dyn ChildTurns>
        })
    }

    /// The children `child` (of agent `agent`, known to the client as `link`) may start in
    /// turn.
    fn nested(
        &self,
        child: &Arc<Session>,
        agent: &AgentType,
        link: &ChildLink,
    ) -> Option<Arc<dyn ChildTurns>> {
        may_delegate(agent, self.depth, self.limits).then(|| {
            Arc::new(Children {
                parent: child.clone(),
                prompt_id: self.prompt_id.clone(),
                depth: self.depth + 1,
                delegating: Some(link.child_session_id.clone()),
                limits: self.limits,
                slots: self.slots.clone(),
            }) as Arc<dyn ChildTurns>
        })
    }

    /// The child session of `agent`, and the model it asks.
    fn child_session(&self, agent: &AgentType) -> Arc<Session> {
        let parent = &self.parent;
        let mut settings = parent.state().settings.clone();
        if let Some(mode) = agent.mode {
            settings.mode = mode.stricter(settings.mode);
        }
        if let Some(model) = &agent.model
            && parent.ctx().model(model).is_some()
        {
            settings.model.clone_from(model);
        }
        let allowed = tool_filter(agent, may_delegate(agent, self.depth, self.limits));
        let services = Arc::new(parent.services().for_child(allowed));
        let system = system_prompt::for_child(parent, &agent.prompt);
        Arc::new(parent.child(services, settings, system.into()))
    }

    async fn run_child(
        &self,
        job: ChildJob,
        report: &dyn CallReport,
        cancel: &CancellationToken,
    ) -> Result<ChildAnswer, ToolError> {
        let _slot = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ToolError("Cancelled before the subagent started.".into())),
            slot = self.slots[self.depth as usize - 1].acquire() => slot.map_err(|_| ToolError("The session is closing.".into()))?,
        };
        let started = Instant::now();
        let child = self.child_session(&job.agent);
        let model = child.state().settings.model.clone();
        let provider = check_credential(child.ctx(), &model)
            .map_err(|e| ToolError(format!("The subagent could not start: {}.", why(&e))))?;
        let link = ChildLink {
            parent_tool_call_id: report.call_id().to_string(),
            child_session_id: new_id("sub"),
            agent: job.agent.name.clone(),
            depth: self.depth,
            delegating_session_id: self.delegating.clone(),
        };
        let states = ChildStates::start(self.parent.clone(), link.clone(), job.description);
        let sink = ChildSink::new(&*self.parent, &child, link, states, report);
        sink.open(
            self.delegating.as_deref().unwrap_or(&self.parent.id),
            job.prompt,
        );
        let setup = Setup {
            prompt_id: self.prompt_id.clone(),
            max_steps: job
                .agent
                .max_turns
                .map_or(self.limits.max_turns, |n| n.min(self.limits.max_turns)),
            children: self.nested(&child, &job.agent, &sink.link),
        };
        let max_steps = setup.max_steps;
        tracing::debug!(
            child = %sink.link.child_session_id,
            agent = %job.agent.name,
            setup_us = started.elapsed().as_micros() as u64,
            "subagent starting"
        );
        let token = cancel.child_token();
        let sessions = child.ctx().sessions();
        let _entry = sessions.adopt_child(&sink.link.child_session_id, token.clone());
        let running = converse(&child, &sink, &token, &*provider, setup);
        let (outcome, timed_out) = self.within_time(running, &token).await;
        let ended = Ended {
            outcome,
            timed_out,
            max_steps,
            timeout_secs: self.limits.timeout.as_secs(),
        };
        let answer = sink.answer(&ended);
        let spent = sink.close(&ended);
        self.parent.add_delegated(spent);
        answer
    }

    /// Runs the child's loop, cancelling it (not dropping it: its calls close as cancelled
    /// ones do) once it has run out of time; `true` when it did.
    async fn within_time(
        &self,
        running: impl Future<Output = Result<StopReason, TurnError>>,
        token: &CancellationToken,
    ) -> (Result<StopReason, TurnError>, bool) {
        tokio::pin!(running);
        tokio::select! {
            outcome = &mut running => (outcome, false),
            () = tokio::time::sleep(self.limits.timeout) => {
                token.cancel();
                (running.await, true)
            }
        }
    }
}

impl ChildTurns for Children {
    fn run<'a>(
        &'a self,
        job: ChildJob,
        report: &'a dyn CallReport,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ChildAnswer, ToolError>> {
        Box::pin(self.run_child(job, report, cancel))
    }
}

/// Whether a child of `agent` at `depth` may start children of its own: only when its agent
/// file lists `task` and the configured depth goes further.
fn may_delegate(agent: &AgentType, depth: u32, limits: SubagentLimits) -> bool {
    let listed = agent
        .tools
        .as_ref()
        .is_some_and(|tools| tools.iter().any(|t| t == "task"));
    listed && depth < limits.max_depth
}

/// The tools a child of `agent` has: its list (or all) of its parent's, `task` only when it
/// may delegate.
fn tool_filter(agent: &AgentType, delegates: bool) -> crate::session::services::ToolFilter {
    let listed = agent.tools.clone();
    Arc::new(move |name: &str| {
        if name == "task" {
            return delegates;
        }
        // A subagent does not talk to the user (its system prompt says so), and the plan mode
        // it may run in is not the session's to leave.
        if name == crate::tools::ASK_USER || name == crate::tools::EXIT_PLAN_MODE {
            return false;
        }
        listed
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|t| t == name))
    })
}

/// A failed child turn, in words for the parent model.
fn why(error: &TurnError) -> String {
    match error {
        TurnError::Provider { error, .. } => error.to_string(),
        TurnError::Auth { provider } => format!("no credential for `{}`", provider.as_str()),
        TurnError::Store(e) | TurnError::Internal(e) => e.clone(),
    }
}

/// How a child's loop ended.
struct Ended {
    outcome: Result<StopReason, TurnError>,
    timed_out: bool,
    max_steps: u32,
    timeout_secs: u64,
}

impl Ended {
    /// Its ACP stop reason (a failure ends its work as a refusal would: nothing more comes).
    fn stop_reason(&self) -> &'static str {
        match &self.outcome {
            Ok(_) if self.timed_out => "cancelled",
            Ok(StopReason::EndTurn) => "end_turn",
            Ok(StopReason::MaxTokens) => "max_tokens",
            Ok(StopReason::MaxTurnRequests) => "max_turn_requests",
            Ok(StopReason::Refusal) | Err(_) => "refusal",
            Ok(StopReason::Cancelled) => "cancelled",
        }
    }
}

/// Where a child's events go: re-addressed onto its parent's session (see the module doc).
struct ChildSink<'a> {
    parent: &'a dyn EventSink,
    child: &'a Session,
    link: ChildLink,
    states: Arc<ChildStates>,
    report: &'a dyn CallReport,
    state: Mutex<Seen>,
}

/// What the sink has seen of the child.
#[derive(Default)]
struct Seen {
    tally: Tally,
    /// The message streaming now, and its text so far (the call's progress).
    streaming: Option<(String, String)>,
    /// When the progress was last reported.
    reported: Option<Instant>,
    /// Text came since, not reported yet.
    behind: bool,
    /// The text of the child's last answer that had any.
    last_text: String,
}

impl<'a> ChildSink<'a> {
    fn new(
        parent: &'a dyn EventSink,
        child: &'a Session,
        link: ChildLink,
        states: Arc<ChildStates>,
        report: &'a dyn CallReport,
    ) -> Self {
        ChildSink {
            parent,
            child,
            link,
            states,
            report,
            state: Mutex::default(),
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The child's text so far, as the call's progress: at once for its first chunk, then
    /// at most every `PROGRESS_EVERY`.
    fn streamed(&self, message_id: String, text: &str) {
        let mut seen = self.seen();
        let fresh = seen
            .streaming
            .as_ref()
            .is_none_or(|(id, _)| *id != message_id);
        if fresh {
            seen.streaming = Some((message_id, String::new()));
        }
        if let Some((_, so_far)) = seen.streaming.as_mut() {
            so_far.push_str(text);
        }
        seen.behind = true;
        if seen
            .reported
            .is_none_or(|at| at.elapsed() >= PROGRESS_EVERY)
        {
            self.catch_up(seen);
        }
    }

    /// Reports the text held back, if any.
    fn catch_up(&self, mut seen: std::sync::MutexGuard<'_, Seen>) {
        let Some((_, so_far)) = seen.streaming.as_ref().filter(|_| seen.behind) else {
            return;
        };
        let from = so_far.len().saturating_sub(MAX_PROGRESS_BYTES);
        let from = (from..=so_far.len())
            .find(|at| so_far.is_char_boundary(*at))
            .unwrap_or(so_far.len());
        let progress = so_far[from..].to_string();
        seen.behind = false;
        seen.reported = Some(Instant::now());
        drop(seen);
        self.report.progress(progress);
    }

    /// Starts the child's context with `prompt`, and tells a client that shows child
    /// sessions that it runs and what it was asked (by `from`, the delegating session).
    fn open(&self, from: &str, prompt: String) {
        let delegated = SessionEvent::Delegated {
            link: self.link.clone(),
            from: from.to_string(),
            prompt: prompt.clone(),
        };
        self.parent.emit(delegated, Visibility::Transient);
        self.remember(Message::user_text(prompt));
    }

    /// Tells a client that shows child sessions that the child's work ended; returns what it
    /// spent.
    fn close(&self, ended: &Ended) -> Tally {
        let spent = self.seen().tally;
        self.states.end(ChildState::Idle {
            stop_reason: ended.stop_reason(),
            usage: spent,
        });
        spent
    }

    fn forward(&self, event: SessionEvent, visibility: Visibility) {
        let child = SessionEvent::Child {
            link: self.link.clone(),
            event: Box::new(event),
        };
        self.parent.emit(child, visibility);
    }

    /// The `task` call's result: the child's final text, or why there is none.
    fn answer(&self, ended: &Ended) -> Result<ChildAnswer, ToolError> {
        let (tally, text) = {
            let seen = self.seen();
            (seen.tally, seen.last_text.clone())
        };
        let last = || match text.trim() {
            "" => String::new(),
            said => format!(" Its last message:\n{said}"),
        };
        let failed = |why: String| Err(ToolError(format!("{why}{}", last())));
        match &ended.outcome {
            Ok(_) if ended.timed_out => failed(format!(
                "The subagent ran out of time ({} s).",
                ended.timeout_secs
            )),
            Ok(StopReason::EndTurn) => Ok(ChildAnswer {
                child_id: self.link.child_session_id.clone(),
                text,
                tally,
            }),
            Ok(StopReason::Cancelled) => failed("The subagent was cancelled.".into()),
            Ok(StopReason::MaxTurnRequests) => failed(format!(
                "The subagent reached its limit of {} model requests.",
                ended.max_steps
            )),
            Ok(StopReason::MaxTokens) => {
                failed("The subagent's answer hit the model's output limit.".into())
            }
            Ok(StopReason::Refusal) => failed("The model refused the subagent's task.".into()),
            Err(e) => failed(format!("The subagent failed: {}.", why(e))),
        }
    }
}

impl EventSink for ChildSink<'_> {
    fn emit(&self, event: SessionEvent, visibility: Visibility) {
        match event {
            SessionEvent::MessageChunk { message_id, text } => {
                self.streamed(message_id.clone(), &text);
                // For a client that shows it on the child's session (the wire drops it for
                // the others); never logged, the call's result keeps the answer.
                let chunk = SessionEvent::MessageChunk { message_id, text };
                self.forward(chunk, Visibility::Transient);
            }
            SessionEvent::Usage {
                request: Some(usage),
                ..
            } => {
                let tally = &mut self.seen().tally;
                tally.input_tokens += usage.input + usage.cache_read + usage.cache_write;
                tally.output_tokens += usage.output;
                tally.cached_read_tokens += usage.cache_read;
            }
            SessionEvent::ToolCallStarted(_) | SessionEvent::ToolCallRejected { .. } => {
                self.seen().tally.tool_calls += 1;
                self.forward(event, visibility);
            }
            SessionEvent::ToolCallRunning { .. }
            | SessionEvent::ToolCallOutput { .. }
            | SessionEvent::ToolCallAlive { .. }
            | SessionEvent::ToolCallProgress { .. }
            | SessionEvent::ToolCallFinished { .. } => self.forward(event, visibility),
            // Silence keeps the client waiting, and shows the text held back.
            SessionEvent::ModelSilent { .. } => {
                self.catch_up(self.seen());
                self.parent.emit(event, visibility);
            }
            // A grandchild's events are marked already.
            SessionEvent::Child { .. }
            | SessionEvent::SubagentState { .. }
            | SessionEvent::Delegated { .. } => self.parent.emit(event, visibility),
            // Its thinking, plan, compactions and notices are its own business.
            _ => {}
        }
    }

    fn subagent(&self) -> Option<ChildLink> {
        Some(self.link.clone())
    }

    fn waits(&self) -> Option<Arc<dyn Waiting>> {
        Some(self.states.clone())
    }

    fn remember(&self, message: Message) {
        if let Message::Assistant { parts } = &message {
            let text: String = parts
                .iter()
                .filter_map(|part| match part {
                    AssistantPart::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            // The answer is whole: its progress shows all of it before the call goes on.
            self.catch_up(self.seen());
            let mut seen = self.seen();
            seen.tally.requests += 1;
            if !text.trim().is_empty() {
                seen.last_text = text;
            }
        }
        self.child.history().push(message);
    }
}
