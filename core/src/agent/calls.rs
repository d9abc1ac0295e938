//! Running the tool calls of one model message: announce each as an ACP tool call, ask
//! permission when the mode and rules say so, run it, stream its output, give it a final
//! status — and always hand the model one result per call, even when cancelled, because the
//! conversation is invalid without it.

use std::sync::Arc;

use futures::future::join_all;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::new_id;
use crate::engine::Shared;
use crate::llm::ToolResult;
use crate::permissions::{self, Decision, Rule};
use crate::rpc::error::REQUEST_CANCELLED;
use crate::session::Session;
use crate::store::StoreOp;
use crate::tools::{self, Access, Kind, Output, Prepared, Tool};

/// A tool call as the model made it.
pub struct ModelCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Everything a call needs from its turn.
pub struct Turn<'a> {
    pub shared: &'a Arc<Shared>,
    pub session: &'a Arc<Session>,
    pub token: &'a CancellationToken,
    pub ctx: tools::Context,
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
    turn.shared
        .tools
        .get(name)
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
            call_id: call.id,
            name: call.name,
            content: output.for_model,
            is_error: false,
        },
        Err(message) => ToolResult {
            call_id: call.id,
            name: call.name,
            content: message,
            is_error: true,
        },
    }
}

async fn execute(turn: &Turn<'_>, id: &str, call: &ModelCall) -> Result<Output, String> {
    let prepared = match prepare(turn, call).await {
        Ok(prepared) => prepared,
        Err(message) => {
            announce_failure(turn, id, call, &message);
            return Err(message);
        }
    };
    let (tool, input, prepared) = prepared;
    announce(turn, id, call, &*tool, &input, &prepared);
    if let Err(message) = permit(turn, id, call, &prepared).await {
        finish(turn, id, Err(&message));
        return Err(message);
    }
    update(turn, id, json!({ "status": "in_progress" }));
    let output = run(turn, id, &*tool, prepared).await;
    let output = match output {
        Ok(_) if turn.token.is_cancelled() => Err("Cancelled by the user.".to_string()),
        other => other,
    };
    match &output {
        Ok(out) => {
            if let Some(plan) = &out.plan {
                record_plan(turn, plan);
            }
            finish(turn, id, Ok(out));
        }
        Err(message) => finish(turn, id, Err(message)),
    }
    output
}

type Ready = (Arc<dyn Tool>, Value, Prepared);

async fn prepare(turn: &Turn<'_>, call: &ModelCall) -> Result<Ready, String> {
    let tool = turn
        .shared
        .tools
        .get(&call.name)
        .ok_or_else(|| format!("There is no tool named `{}`.", call.name))?;
    let input: Value = serde_json::from_str(if call.arguments.trim().is_empty() {
        "{}"
    } else {
        &call.arguments
    })
    .map_err(|e| format!("The arguments are not valid JSON: {e}"))?;
    let prepared = tool.prepare(&input, &turn.ctx).await.map_err(|e| e.0)?;
    Ok((tool, input, prepared))
}

/// Runs the tool, forwarding live output deltas as they come.
async fn run(
    turn: &Turn<'_>,
    id: &str,
    tool: &dyn Tool,
    prepared: Prepared,
) -> Result<Output, String> {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let forward = async {
        while let Some(delta) = rx.recv().await {
            let update = json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": id,
                "_meta": { "terminal_output": { "terminal_id": id, "data": delta } },
            });
            turn.session.notify_value(turn.shared, &update);
        }
    };
    let (output, ()) = tokio::join!(
        async {
            let output = tool.run(prepared, &turn.ctx, tx).await;
            output.map_err(|e| e.0)
        },
        forward
    );
    output
}

/// Asks the mode, the rules and, if need be, the user. `Err` carries the model's message.
async fn permit(
    turn: &Turn<'_>,
    id: &str,
    call: &ModelCall,
    prepared: &Prepared,
) -> Result<(), String> {
    let (mode, cwd) = {
        let state = turn.session.state();
        (state.settings.mode, state.cwd.clone())
    };
    let rules = load_rules(turn.shared, &cwd).await;
    match permissions::decide(mode, &call.name, &prepared.access, &turn.ctx.roots, &rules) {
        Decision::Allow => Ok(()),
        Decision::Deny(reason) => Err(reason),
        Decision::Ask { remember } => ask(turn, id, call, prepared, remember, &cwd).await,
    }
}

async fn load_rules(shared: &Arc<Shared>, workspace: &str) -> Vec<Rule> {
    shared.outbox.flushed().await;
    let (store, workspace) = (shared.store.clone(), workspace.to_string());
    match tokio::task::spawn_blocking(move || store.rules(&workspace)).await {
        Ok(Ok(rules)) => rules,
        other => {
            tracing::error!(?other, "cannot read permission rules; asking");
            Vec::new()
        }
    }
}

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";
const REJECT_ALWAYS: &str = "reject_always";

async fn ask(
    turn: &Turn<'_>,
    id: &str,
    call: &ModelCall,
    prepared: &Prepared,
    remember: Option<String>,
    workspace: &str,
) -> Result<(), String> {
    let mut options =
        vec![json!({ "optionId": ALLOW_ONCE, "name": "Allow", "kind": "allow_once" })];
    if remember.is_some() {
        options.push(
            json!({ "optionId": ALLOW_ALWAYS, "name": "Always allow", "kind": "allow_always" }),
        );
    }
    options.push(json!({ "optionId": REJECT_ONCE, "name": "Reject", "kind": "reject_once" }));
    if remember.is_some() {
        options.push(
            json!({ "optionId": REJECT_ALWAYS, "name": "Always reject", "kind": "reject_always" }),
        );
    }
    let mut tool_call = json!({ "toolCallId": id, "title": prepared.title, "status": "pending" });
    let diffs = diff_content(&prepared.access);
    if !diffs.is_empty() {
        tool_call["content"] = Value::Array(diffs);
    }
    let params =
        json!({ "sessionId": &*turn.session.id, "toolCall": tool_call, "options": options });
    let shared = turn.shared;
    let answer = shared
        .outgoing
        .request(
            &shared.outbox,
            "session/request_permission",
            params,
            turn.token,
        )
        .await;
    let chosen = match answer {
        Ok(result) if result.pointer("/outcome/outcome") == Some(&json!("selected")) => result
            .pointer("/outcome/optionId")
            .and_then(Value::as_str)
            .map(str::to_string),
        Ok(_) => None,
        Err(e) if e.code == REQUEST_CANCELLED => None,
        Err(e) => return Err(format!("The permission request failed: {}", e.message)),
    };
    let Some(chosen) = chosen else {
        return Err("Cancelled by the user before it was approved.".into());
    };
    let allow = matches!(chosen.as_str(), ALLOW_ONCE | ALLOW_ALWAYS);
    if let (ALLOW_ALWAYS | REJECT_ALWAYS, Some(pattern)) = (chosen.as_str(), remember) {
        let rule = Rule {
            tool: call.name.clone(),
            pattern,
            allow,
        };
        shared.outbox.write(
            StoreOp::AddRule {
                workspace: workspace.to_string(),
                rule,
            },
            None,
        );
    }
    match chosen.as_str() {
        ALLOW_ONCE | ALLOW_ALWAYS => Ok(()),
        REJECT_ONCE | REJECT_ALWAYS => {
            Err("The user rejected this tool call. Do not retry it; ask or try another way.".into())
        }
        other => Err(format!(
            "The client chose an unknown option `{other}`; not running."
        )),
    }
}

/// Diffs larger than this go out as a one-line summary: a frame must stay well inside what
/// clients accept (the TS SDK's cap is 32 MiB), and nobody reviews megabytes in a dialog.
const MAX_DIFF_BYTES: usize = 256 * 1024;
/// Strings in `rawInput` longer than this are replaced by their size (a `write` of a large
/// file already shows as a diff).
const MAX_RAW_STRING: usize = 4096;

fn diff_content(access: &Access) -> Vec<Value> {
    let Access::Edit(diffs) = access else {
        return Vec::new();
    };
    let content = diffs
        .iter()
        .map(|d| json!({ "type": "diff", "path": d.path, "oldText": d.old_text, "newText": d.new_text }))
        .collect();
    bounded(content)
}

/// Tool call content with every oversized diff replaced by a summary.
fn bounded(content: Vec<Value>) -> Vec<Value> {
    content
        .into_iter()
        .map(|item| {
            let size = |key: &str| item[key].as_str().map_or(0, str::len);
            if item["type"] != "diff" || size("oldText") + size("newText") <= MAX_DIFF_BYTES {
                return item;
            }
            let kib = (size("oldText") + size("newText")) / 1024;
            let path = item["path"].as_str().unwrap_or("a file");
            text_content(&format!(
                "{path}: a change of {kib} KiB, too large to show as a diff"
            ))
        })
        .collect()
}

fn shrink_raw_input(input: &Value) -> Value {
    match input {
        Value::String(text) if text.len() > MAX_RAW_STRING => {
            json!(format!("<{} bytes>", text.len()))
        }
        Value::Array(items) => Value::Array(items.iter().map(shrink_raw_input).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shrink_raw_input(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn announce(
    turn: &Turn<'_>,
    id: &str,
    call: &ModelCall,
    tool: &dyn Tool,
    input: &Value,
    prepared: &Prepared,
) {
    let locations: Vec<Value> = prepared
        .locations
        .iter()
        .map(|l| match l.line {
            Some(line) => json!({ "path": l.path, "line": line }),
            None => json!({ "path": l.path }),
        })
        .collect();
    let mut update = json!({
        "sessionUpdate": "tool_call",
        "toolCallId": id,
        "title": prepared.title,
        "kind": tool.kind().as_str(),
        "status": "pending",
        "locations": locations,
        "rawInput": shrink_raw_input(input),
        "name": call.name,
    });
    let diffs = diff_content(&prepared.access);
    if !diffs.is_empty() {
        update["content"] = Value::Array(diffs);
    }
    turn.session.record_value(turn.shared, update);
}

/// A call that failed before it could be announced properly (unknown tool, bad input).
fn announce_failure(turn: &Turn<'_>, id: &str, call: &ModelCall, message: &str) {
    let raw_input =
        serde_json::from_str::<Value>(&call.arguments).unwrap_or_else(|_| json!(call.arguments));
    turn.session.record_value(
        turn.shared,
        json!({
            "sessionUpdate": "tool_call",
            "toolCallId": id,
            "title": call.name,
            "kind": "other",
            "status": "failed",
            "rawInput": raw_input,
            "name": call.name,
            "content": [text_content(message)],
        }),
    );
}

fn update(turn: &Turn<'_>, id: &str, fields: Value) {
    let mut update = json!({ "sessionUpdate": "tool_call_update", "toolCallId": id });
    if let (Some(target), Some(fields)) = (update.as_object_mut(), fields.as_object()) {
        target.extend(fields.clone());
    }
    turn.session.record_value(turn.shared, update);
}

fn finish(turn: &Turn<'_>, id: &str, outcome: Result<&Output, &String>) {
    match outcome {
        Ok(output) => {
            let mut fields =
                json!({ "status": "completed", "content": bounded(output.content.clone()) });
            if let Some(raw) = &output.raw_output {
                fields["rawOutput"] = raw.clone();
            }
            update(turn, id, fields);
        }
        Err(message) => update(
            turn,
            id,
            json!({ "status": "failed", "content": [text_content(message)] }),
        ),
    }
}

fn text_content(text: &str) -> Value {
    json!({ "type": "content", "content": { "type": "text", "text": text } })
}

fn record_plan(turn: &Turn<'_>, plan: &[tools::PlanEntry]) {
    let entries: Vec<Value> = plan
        .iter()
        .map(|e| json!({ "content": e.content, "priority": e.priority, "status": e.status }))
        .collect();
    turn.session.record_value(
        turn.shared,
        json!({ "sessionUpdate": "plan", "entries": entries }),
    );
}
