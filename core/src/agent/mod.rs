//! The turn: log the prompt, take it into the session's context (kept in memory), stream the
//! model's answer as events to a sink (which logs them and tells the client), run the tools
//! it asks for, compact the context when it outgrows the model's window, and say why it
//! stopped. It returns a typed outcome, never a response.
//!
//! Tests: end to end in `core/tests/tool_turns.rs` (the tool loop), `prompt.rs`,
//! `permissions.rs`, `cancel.rs`, `client_io.rs`, `providers.rs` and `steering.rs`.

mod calls;
mod checkpoint;
mod child;
mod child_state;
pub mod commands;
mod compaction;
mod hosted_search;
mod liveness;
mod outcome;
mod request;
mod restore;
pub mod rewind;
mod stream;
pub mod system_prompt;
mod tally;
pub mod title;
pub mod undo;
mod user;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use self::commands::Ran;
use self::compaction::Compacted;
pub use self::outcome::{StopReason, TurnEnd, TurnError};
use crate::chat::{Message, Prompt};
use crate::config::ProviderName;
use crate::context::EngineContext;
use crate::ids::new_id;
use crate::llm::{ChatRequest, LlmError, Provider};
use crate::session::Session;
use crate::session::events::{CompactionTrigger, EventSink, SessionEvent, Visibility};
use crate::session::failure::TurnFailure;
use crate::session::project::instructions::instructions_changed;
use crate::session::project::skills::skills_changed;
use crate::store::{TitleSource, now};
use crate::tools;

/// A prompt is a command (`commands.rs`) or a message to the model. A provider's failure is
/// told the user (`session/failure.rs`) before the turn answers with it; a turn that ends
/// answers with its token totals (`tally.rs`).
pub async fn run_turn(
    session: &Arc<Session>,
    sink: &dyn EventSink,
    token: &CancellationToken,
    prompt: Prompt,
) -> Result<TurnEnd, TurnError> {
    let tally = tally::UsageTally::new(sink);
    match prompted(session, &tally, token, prompt).await {
        Ok(stop) => Ok(TurnEnd {
            stop,
            usage: tally.total(),
        }),
        Err(error) => {
            if let TurnError::Provider { provider, error } = &error {
                tell_failure(sink, TurnFailure::of(*provider, error));
            }
            Err(error)
        }
    }
}

/// Tells the user through `sink` that the turn failed. As a notice (or JetBrains' form) it
/// is not kept, like every notice; as the line of agent message a client without notices
/// gets, it is logged, so the replay shows why the prompt has no answer.
fn tell_failure(sink: &dyn EventSink, failure: TurnFailure) {
    let event = SessionEvent::TurnFailed {
        failure,
        air: false,
    };
    sink.emit(event, Visibility::Live);
}

async fn prompted(
    session: &Arc<Session>,
    sink: &dyn EventSink,
    token: &CancellationToken,
    prompt: Prompt,
) -> Result<StopReason, TurnError> {
    let model = session.state().settings.model.clone();
    let Some(command) = commands::parse(session, &prompt).await else {
        let provider = check_credential(session.ctx(), &model)?;
        let prompt_id = log_prompt(session, sink, prompt, true);
        let setup = Setup::root(session, prompt_id);
        return converse(session, sink, token, &*provider, setup).await;
    };
    let prompt_id = log_prompt(session, sink, prompt, false);
    match commands::run(session, sink, token, command).await {
        // A message steered in while the command ran gets an answer of its own, as one
        // steered into a model's final answer does: the command made no request to carry it.
        Ran::Answered(Ok(StopReason::EndTurn)) if session.steering().has_pending() => {
            let provider = check_credential(session.ctx(), &model)?;
            let setup = Setup::root(session, prompt_id);
            converse(session, sink, token, &*provider, setup).await
        }
        Ran::Answered(outcome) => outcome,
        Ran::ForModel(text) => {
            let provider = check_credential(session.ctx(), &model)?;
            // Model-only, right after the prompt the replay shows: where a restart's rebuilt
            // context has it too.
            sink.remember(Message::user_text(text));
            let setup = Setup::root(session, prompt_id);
            converse(session, sink, token, &*provider, setup).await
        }
    }
}

/// What the model's side of a turn runs with.
struct Setup {
    /// The turn's user message, which its file checkpoints belong to (a subagent's edits
    /// belong to the turn that delegated).
    prompt_id: String,
    /// The most model requests it makes; each may ask for several tool calls.
    max_steps: u32,
    /// Who runs the children its `task` calls start (`None`: it may not delegate).
    children: Option<Arc<dyn tools::ChildTurns>>,
}

impl Setup {
    /// A turn of the client's session.
    fn root(session: &Arc<Session>, prompt_id: String) -> Setup {
        Setup {
            children: child::Children::of(session, &prompt_id),
            max_steps: session.ctx().config().max_turn_requests(),
            prompt_id,
        }
    }
}

/// The model's side of a turn, once the prompt is in its context.
async fn converse(
    session: &Arc<Session>,
    sink: &dyn EventSink,
    token: &CancellationToken,
    provider: &dyn Provider,
    setup: Setup,
) -> Result<StopReason, TurnError> {
    // A subagent's instructions and skills are those its system prompt showed when it
    // started; its parent's turn tells the client of changes.
    if session.child_system().is_none() {
        if let Some(message) = instructions_changed(session) {
            sink.remember(message);
        }
        if let Some(message) = skills_changed(session) {
            sink.remember(message);
            commands::refresh(session, sink);
        }
    }
    // The first turn of a session may start while its MCP servers still connect.
    session.services().mcp_ready().await;
    let turn = calls::Turn {
        session,
        sink,
        token,
        tool_ctx: tool_context(session, token, setup.children),
        prompt_id: setup.prompt_id,
    };
    // A provider's "too long" is answered once per turn with a compaction and a retry.
    let mut overflowed = false;
    let mut steps = 0;
    while steps < setup.max_steps {
        // What the user sent meanwhile goes with this request, after the tool results.
        for steered in session.steering().take() {
            log_steered(session, sink, steered);
        }
        if compaction::needed(session) {
            let trigger = CompactionTrigger::Automatic;
            let compacted = compaction::compact(session, sink, token, provider, trigger, None);
            if let Compacted::Cancelled = compacted.await {
                return Ok(StopReason::Cancelled);
            }
        }
        let (request, weight) = request::next(session, provider.name()).await?;
        if token.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
        let answer = match stream_answer(session, sink, token, provider, request, weight).await {
            Err(TurnError::Provider { error, .. })
                if error.is_context_overflow() && !overflowed =>
            {
                overflowed = true;
                let trigger = CompactionTrigger::Overflow;
                let compacted = compaction::compact(session, sink, token, provider, trigger, None);
                match compacted.await {
                    Compacted::Done => continue,
                    Compacted::Cancelled => return Ok(StopReason::Cancelled),
                    Compacted::Failed(_) => return Err(failed(provider, error)),
                }
            }
            answer => answer?,
        };
        steps += 1;
        let stop = match answer.outcome {
            Step::Stopped(stop) => stop,
            Step::Failed(error) => return Err(error),
        };
        // The provider paused a long turn of its own tools: the conversation, sent back as it
        // is, resumes it.
        if answer.paused && answer.calls.is_empty() && stop == StopReason::EndTurn {
            continue;
        }
        // A message steered in while the model answered gets an answer of its own.
        if answer.calls.is_empty()
            && stop == StopReason::EndTurn
            && session.steering().has_pending()
        {
            continue;
        }
        // Calls that will never run get their results before anything else joins the
        // context (`History::push`), like calls a crash interrupted.
        if answer.calls.is_empty() || stop == StopReason::Cancelled {
            return Ok(stop);
        }
        let results = calls::run_all(&turn, answer.calls).await;
        sink.remember(Message::ToolResults { results });
        if token.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
    }
    Ok(StopReason::MaxTurnRequests)
}

/// The provider of `model`, if it has a credential.
pub fn check_credential(ctx: &EngineContext, model: &str) -> Result<Arc<dyn Provider>, TurnError> {
    let provider_name = ctx
        .model(model)
        .map_or(ProviderName::Openai, |m| m.provider);
    let provider = ctx.providers().by_name(provider_name);
    if provider.has_credential() {
        Ok(provider)
    } else {
        Err(TurnError::Auth {
            provider: provider_name,
        })
    }
}

/// Where the session's tools run: its workspace for this turn (the client's for what it
/// advertised, else local), its roots, the configured limits, whether its model sees, and
/// who runs its children.
fn tool_context(
    session: &Arc<Session>,
    token: &CancellationToken,
    children: Option<Arc<dyn tools::ChildTurns>>,
) -> tools::Context {
    let (cwd, roots, model) = {
        let state = session.state();
        let mut roots = vec![PathBuf::from(&state.cwd)];
        roots.extend(state.additional_dirs.iter().map(PathBuf::from));
        (
            PathBuf::from(&state.cwd),
            roots,
            state.settings.model.clone(),
        )
    };
    let ctx = session.ctx();
    tools::Context {
        cwd,
        roots,
        io: session.services().workspace(&*ctx.workspaces(), token),
        limits: ctx.tool_limits().clone(),
        sandbox: ctx.resolved().sandbox.clone(),
        cancel: token.clone(),
        vision: ctx.model_sees(&model),
        lsp: session.services().lsp(),
        children,
        skills: session.skills().shelf(),
        // Bound to each call when it runs (`calls.rs`).
        user: None,
    }
}

/// Logs a message the user steered into a running turn, as a prompt of its own (replayed in
/// place, read by the model).
pub fn log_steered(session: &Session, sink: &dyn EventSink, prompt: Prompt) {
    log_prompt(session, sink, prompt, true);
}

/// Logs the prompt for replay and (unless it is a command) the model's context, and names the
/// session after its first prompt. Returns the prompt's user message id.
fn log_prompt(session: &Session, sink: &dyn EventSink, prompt: Prompt, for_model: bool) -> String {
    let first_title = title::from_prompt(&prompt);
    let message_id = new_id("msg");
    for block in prompt.blocks {
        let chunk = SessionEvent::UserChunk {
            message_id: message_id.clone(),
            content: block.content,
            for_model,
        };
        sink.emit(chunk, Visibility::ReplayOnly);
    }
    if let Some(title) = first_title
        && session.set_title(title.clone(), TitleSource::Agent)
    {
        let updated_at = now();
        sink.emit(SessionEvent::Title { title, updated_at }, Visibility::Live);
    }
    message_id
}

fn failed(provider: &dyn Provider, error: LlmError) -> TurnError {
    TurnError::Provider {
        provider: provider.name(),
        error,
    }
}

enum Step {
    Stopped(StopReason),
    Failed(TurnError),
}

struct Streamed {
    outcome: Step,
    calls: Vec<calls::ModelCall>,
    /// The provider paused the answer (`FinishReason::Paused`).
    paused: bool,
}

/// One model request, streamed to the sink. A provider failure before any output is an
/// error; after that, what streamed stays in the log either way.
async fn stream_answer(
    session: &Session,
    sink: &dyn EventSink,
    token: &CancellationToken,
    provider: &dyn Provider,
    request: ChatRequest,
    weight: usize,
) -> Result<Streamed, TurnError> {
    let interval = session.ctx().tool_limits().liveness;
    // Dropping the future or the stream drops the HTTP connection: cancel is immediate.
    let mut events = tokio::select! {
        biased;
        () = token.cancelled() => return Ok(Streamed { outcome: Step::Stopped(StopReason::Cancelled), calls: Vec::new(), paused: false }),
        started = liveness::waiting_for_model(provider.stream(request), sink, interval, Instant::now()) => started.map_err(|e| failed(provider, e))?,
    };
    let mut answer = stream::Accumulator::new();
    // An event read ahead while merging deltas, to be handled next.
    let mut ahead = None;
    let outcome = loop {
        let next = match ahead.take() {
            Some(next) => next,
            None => tokio::select! {
                biased;
                () = token.cancelled() => break Step::Stopped(StopReason::Cancelled),
                next = liveness::waiting_for_model(events.next(), sink, interval, Instant::now()) => next,
            },
        };
        match next {
            None => break Step::Stopped(answer.stop_reason()),
            Some(Err(e)) => break Step::Failed(failed(provider, e)),
            Some(Ok(event)) => {
                let (event, next) = stream::merge_ready(event, &mut events);
                answer.take(sink, event);
                ahead = next;
            }
        }
    };
    // What streamed is part of the conversation even when the turn ends early.
    answer.close_searches(sink);
    answer.remember(sink);
    answer.report_usage(session, sink, weight);
    let calls = match outcome {
        Step::Failed(_) => Vec::new(),
        _ => answer.tool_calls(),
    };
    let paused = answer.paused();
    Ok(Streamed {
        outcome,
        calls,
        paused,
    })
}
