//! Running the tool calls of one model message: announce each as a tool call, ask
//! permission when the mode and rules say so, run it, stream its output, give it a final
//! status — and always hand the model one result per call, even when cancelled, because the
//! conversation is invalid without it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::checkpoint;
use crate::access::{Access, Diff, Scope};
use crate::chat::ToolResult;
use crate::ids::new_id;
use crate::permissions::prompt::{self, PermissionAsk};
use crate::permissions::{self, Decision, Mode, Roots, Rule, Sandboxing};
use crate::question::Wait;
use crate::session::Session;
use crate::session::events::{EventSink, SessionEvent, ToolCallStart, ToolOutcome, Visibility};
use crate::tools::{self, AnyTool, CallReport, Kind, Output, PlanEntry, Ready};

/// A tool call as the model made it.
pub struct ModelCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Everything a call needs from its turn.
pub struct Turn<'a> {
    pub session: &'a Arc<Session>,
    pub sink: &'a dyn EventSink,
    pub token: &'a CancellationToken,
    /// The turn's user message id, which its file checkpoints are recorded under.
    pub prompt_id: String,
    /// Where and how its tools run.
    pub tool_ctx: tools::Context,
}

impl Turn<'_> {
    fn tool(&self, name: &str) -> Option<Arc<dyn AnyTool>> {
        self.session.services().tool(name)
    }

    fn emit(&self, event: SessionEvent) {
        self.sink.emit(event, Visibility::Live);
    }
}

/// Runs the calls in order; consecutive read-only calls run concurrently. Returns one
/// result per call, in call order.
pub async fn run_all(turn: &Turn<'_>, calls: Vec<ModelCall>) -> Vec<ToolResult> {
    let mut results = Vec::with_capacity(calls.len());
    let mut batch: Vec<ModelCall> = Vec::new();
    for call in calls {
        if is_read_only(turn, &call.name) {
            batch.push(call);
            continue;
        }
        results.extend(join_all(batch.drain(..).map(|c| run_one(turn, c))).await);
        results.push(run_one(turn, call).await);
    }
    results.extend(join_all(batch.into_iter().map(|c| run_one(turn, c))).await);
    results
}

fn is_read_only(turn: &Turn<'_>, name: &str) -> bool {
    turn.tool(name)
        .is_some_and(|t| matches!(t.kind(), Kind::Read | Kind::Search | Kind::Think))
}

async fn run_one(turn: &Turn<'_>, call: ModelCall) -> ToolResult {
    let id = new_id("tc");
    let outcome = if turn.token.is_cancelled() {
        Err("Not run: the user cancelled the turn.".to_string())
    } else {
        execute(turn, &id, &call).await
    };
    match outcome {
        Ok(output) => ToolResult {
            images: output.images,
            ..ToolResult::text(call.id, call.name, output.for_model, false)
        },
        Err(message) => ToolResult::text(call.id, call.name, message, true),
    }
}

async fn execute(turn: &Turn<'_>, id: &str, call: &ModelCall) -> Result<Output, String> {
    let (mode, ctx) = call_context(turn, id);
    let prepared = match prepare(turn, &ctx, call).await {
        Ok(prepared) => prepared,
        Err(message) => {
            announce_failure(turn, id, call, &message);
            return Err(message);
        }
    };
    let (tool, input, prepared) = prepared;
    announce(turn, id, call, &*tool, input, &prepared);
    if let Err(message) = permit(turn, &ctx, mode, id, call, &*tool, &prepared).await {
        finish(turn, id, Err(&message));
        return Err(message);
    }
    turn.emit(SessionEvent::ToolCallRunning { id: id.to_string() });
    let changes = checkpoint::before(turn.session, &turn.prompt_id, &prepared);
    let output = run(turn, &ctx, id, prepared).await;
    checkpoint::after(turn.session, &turn.prompt_id, &changes, output.is_ok());
    let output = match output {
        Ok(_) if turn.token.is_cancelled() => Err("Cancelled by the user.".to_string()),
        other => other,
    };
    finish(turn, id, output.as_ref());
    output
}

type Prepared = (Arc<dyn AnyTool>, Value, Ready);

/// What one call runs under, read once so that the decision and the run agree: the session's
/// permission mode (a subagent's bounded by its parent's), and the turn's tool context with
/// the sandbox of the session's `sandbox` option, narrowed to read-only without network in
/// plan mode, and the user as call `id` reaches them.
fn call_context(turn: &Turn<'_>, id: &str) -> (Mode, tools::Context) {
    let mode = turn.session.mode();
    let sandbox = turn.session.state().settings.sandbox;
    let setup = turn.tool_ctx.sandbox.for_call(sandbox, mode == Mode::Plan);
    let ctx = tools::Context {
        sandbox: Arc::new(setup),
        user: Some(super::user::CallUser::for_call(
            turn.session,
            id,
            turn.token,
            turn.sink,
        )),
        ..turn.tool_ctx.clone()
    };
    (mode, ctx)
}

/// Whether the commands of a call under `ctx` run confined.
fn sandboxing(ctx: &tools::Context) -> Sandboxing {
    if ctx.sandbox.settings.mode == crate::sandbox::Mode::Off {
        Sandboxing::Off
    } else if crate::io::process::sandbox_available() {
        Sandboxing::On
    } else {
        Sandboxing::Unavailable
    }
}

async fn prepare(
    turn: &Turn<'_>,
    ctx: &tools::Context,
    call: &ModelCall,
) -> Result<Prepared, String> {
    let tool = turn
        .tool(&call.name)
        .ok_or_else(|| format!("There is no tool named `{}`.", call.name))?;
    let input: Value = serde_json::from_str(if call.arguments.trim().is_empty() {
        "{}"
    } else {
        &call.arguments
    })
    .map_err(|e| format!("The arguments are not valid JSON: {e}"))?;
    let prepared = tool.prepare(&input, ctx).await.map_err(|e| e.0)?;
    Ok((tool, input, prepared))
}

/// Runs the call, its reports going out as the call's events as they come; a call that
/// reports nothing for `limits.liveness` is said to be alive, with its elapsed time.
async fn run(
    turn: &Turn<'_>,
    ctx: &tools::Context,
    id: &str,
    prepared: Ready,
) -> Result<Output, String> {
    let started = Instant::now();
    let report = Reporter {
        turn,
        id,
        last_said: Mutex::new(started),
    };
    let running = prepared.run(ctx, &report);
    tokio::pin!(running);
    let interval = ctx.limits.liveness;
    let output = loop {
        let quiet_since = *report.last_said.lock().unwrap_or_else(|p| p.into_inner());
        tokio::select! {
            output = &mut running => break output,
            () = tokio::time::sleep_until((quiet_since + interval).into()) => {
                if report.quiet_for(interval) {
                    report.alive(started.elapsed());
                }
            }
        }
    };
    output.map_err(|e| e.0)
}

/// What a running call reports, as events of that call.
struct Reporter<'a> {
    turn: &'a Turn<'a>,
    id: &'a str,
    /// When the client last heard of the call.
    last_said: Mutex<Instant>,
}

impl Reporter<'_> {
    fn said(&self) {
        *self.last_said.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn quiet_for(&self, interval: Duration) -> bool {
        self.last_said
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
            >= interval
    }

    fn alive(&self, elapsed: Duration) {
        let alive = SessionEvent::ToolCallAlive {
            id: self.id.to_string(),
            elapsed,
        };
        self.turn.sink.emit(alive, Visibility::Transient);
        self.said();
    }
}

impl CallReport for Reporter<'_> {
    fn output(&self, delta: String) {
        let output = SessionEvent::ToolCallOutput {
            id: self.id.to_string(),
            delta,
        };
        self.turn.sink.emit(output, Visibility::Transient);
        self.said();
    }

    /// A cancelled call's plan is not shown: the call fails "Cancelled by the user.".
    fn plan(&self, entries: Vec<PlanEntry>) {
        if !self.turn.token.is_cancelled() {
            self.turn.emit(SessionEvent::Plan(entries));
        }
    }

    fn progress(&self, text: String) {
        let progress = SessionEvent::ToolCallProgress {
            id: self.id.to_string(),
            text,
        };
        self.turn.sink.emit(progress, Visibility::Transient);
        self.said();
    }

    fn call_id(&self) -> &str {
        self.id
    }
}

/// Asks the mode, the rules and, if need be, the user. `Err` carries the model's message.
async fn permit(
    turn: &Turn<'_>,
    ctx: &tools::Context,
    mode: Mode,
    id: &str,
    call: &ModelCall,
    tool: &dyn AnyTool,
    prepared: &Ready,
) -> Result<(), String> {
    let cwd = turn.session.state().cwd.clone();
    let rules = turn.session.rules(&cwd).await;
    let io = ctx.io.clone();
    let canonical = move |path: &std::path::Path| io.canonicalize(path);
    let roots = Roots::new(&ctx.roots, &canonical).guarding(&ctx.sandbox.protected);
    let sandboxing = sandboxing(ctx);
    match permissions::decide(
        mode,
        &call.name,
        &prepared.access,
        &roots,
        &rules,
        sandboxing,
    ) {
        Decision::Allow => Ok(()),
        Decision::Deny(reason) => Err(reason),
        Decision::Ask { remember } => {
            let ask = PermissionAsk {
                tool_call_id: id.to_string(),
                title: prepared.title.clone(),
                kind: tool.kind().as_str(),
                description: description(&prepared.access, &prepared.title),
                diffs: diffs(&prepared.access),
                raw_input: matches!(
                    prepared.access,
                    Access::External { .. } | Access::Escalate(_) | Access::Execute(_)
                )
                .then(|| serde_json::from_str(&call.arguments).unwrap_or(Value::Null)),
                options: prompt::options(remember.is_some()),
                subagent: turn.sink.subagent(),
            };
            ask_user(turn, call, &ask, remember, &cwd).await
        }
    }
}

/// `text` as a Markdown code block, in a fence longer than any run of backticks in it (a
/// command's own could otherwise close the block and show the rest as prose).
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}sh\n{text}\n{fence}")
}

/// What the user reads beside the title: a command that the title shows only in part
/// (its first line, cut), whole — the user approves all of it; for an escalation, the
/// model's reason and what it would be granted.
fn description(access: &Access, title: &str) -> Option<String> {
    if let Access::Execute(command) = access {
        let shown_whole = !command.contains('\n') && title.contains(command.trim());
        return (!shown_whole).then(|| fenced(command.trim_end()));
    }
    let Access::Escalate(escalation) = access else {
        return None;
    };
    let what = match &escalation.scope {
        Scope::Unconfined => "Runs with no sandbox, for this run only.".to_string(),
        widen => format!(
            "Widens the sandbox for this run only: {}.",
            widen.describe()
        ),
    };
    Some(format!(
        "{what}\nWhy (the model's words): {}",
        escalation.justification
    ))
}

async fn ask_user(
    turn: &Turn<'_>,
    call: &ModelCall,
    ask: &PermissionAsk,
    remember: Option<String>,
    workspace: &str,
) -> Result<(), String> {
    let ctx = turn.session.ctx();
    let wire = ctx.wire();
    let asking = wire.asks_on(&turn.session.id, ask.subagent.as_ref());
    let wait = Wait::start(turn.sink.waits());
    let chosen = ctx.approver().ask(asking, ask, turn.token).await;
    drop(wait);
    let chosen = chosen.map_err(|message| format!("The permission request failed: {message}"))?;
    let Some(chosen) = chosen else {
        return Err("Cancelled by the user before it was approved.".into());
    };
    let Some(answer) = prompt::answer(&chosen) else {
        return Err(format!(
            "The client chose an unknown option `{chosen}`; not running."
        ));
    };
    if let (true, Some(pattern)) = (answer.remember, remember) {
        let rule = Rule {
            tool: call.name.clone(),
            pattern,
            allow: answer.allow,
        };
        turn.session.remember_rule(workspace, rule);
    }
    if answer.allow {
        Ok(())
    } else {
        Err("The user rejected this tool call. Do not retry it; ask or try another way.".into())
    }
}

fn diffs(access: &Access) -> Vec<Diff> {
    match access {
        Access::Edit(diffs) => diffs.clone(),
        _ => Vec::new(),
    }
}

fn announce(
    turn: &Turn<'_>,
    id: &str,
    call: &ModelCall,
    tool: &dyn AnyTool,
    input: Value,
    prepared: &Ready,
) {
    turn.emit(SessionEvent::ToolCallStarted(ToolCallStart {
        id: id.to_string(),
        title: prepared.title.clone(),
        kind: tool.kind(),
        locations: prepared.locations.clone(),
        raw_input: input,
        name: call.name.clone(),
        diffs: diffs(&prepared.access),
    }));
}

/// A call that failed before it could be announced properly (unknown tool, bad input).
fn announce_failure(turn: &Turn<'_>, id: &str, call: &ModelCall, message: &str) {
    let raw_input =
        serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!(call.arguments));
    turn.emit(SessionEvent::ToolCallRejected {
        id: id.to_string(),
        name: call.name.clone(),
        raw_input,
        message: message.to_string(),
    });
}

fn finish(turn: &Turn<'_>, id: &str, outcome: Result<&Output, &String>) {
    let outcome = match outcome {
        Ok(output) => ToolOutcome::Completed {
            content: output.content.clone(),
            raw_output: output.raw_output.clone(),
            meta: output.meta.clone(),
        },
        Err(message) => ToolOutcome::Failed(message.clone()),
    };
    turn.emit(SessionEvent::ToolCallFinished {
        id: id.to_string(),
        outcome,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commands_own_backticks_never_close_its_block() {
        assert_eq!(fenced("ls"), "```sh\nls\n```");
        assert_eq!(
            fenced("echo ```\nrm -rf x"),
            "````sh\necho ```\nrm -rf x\n````"
        );
        assert_eq!(fenced("a `b` c"), "```sh\na `b` c\n```");
    }
}
