//! The stored log format (`LogFormat`): session events as ACP v1 `session/update`s — the only
//! place that builds update JSON — and what the domain reads back from them (`decode`). An
//! event is written in its own form; what a client that cannot show it is told instead is the
//! connection's `Wire` (`acp/wire/`), which hands this format the stand-in. `session/load`
//! replays the log as the client first saw it, byte for byte.
//!
//! Member order is part of the format (the crate keeps JSON objects in insertion order), so
//! each shape is written out once, here.

use agent_client_protocol_schema::v1::{
    AvailableCommand as AcpCommandEntry, AvailableCommandInput, AvailableCommandsUpdate,
    ConfigOptionUpdate, ContentBlock, ContentChunk, CurrentModeUpdate, EmbeddedResourceResource,
    MessageId, Notice, NoticeSeverity, SessionInfoUpdate, SessionUpdate, TextContent,
    UnstructuredCommandInput,
};
use serde_json::{Value, json};

use crate::chat::{Image, UserPart};
use crate::config::ModelInfo;
use crate::context::LogFormat;
use crate::llm::Usage;
use crate::session::events::{
    AvailableCommand, CallStatus, ChildLink, ChildState, CompactionEnd, CompactionFigures, Cost,
    Recorded, SessionEvent, ToolCallStart, ToolOutcome,
};
use crate::tools::{Diff, Location, PlanEntry, ToolContent};

/// Diffs larger than this go out as a one-line summary: a frame must stay well inside what
/// clients accept (the TS SDK's cap is 32 MiB), and nobody reviews megabytes in a dialog.
const MAX_DIFF_BYTES: usize = 256 * 1024;
/// Strings in `rawInput` longer than this are replaced by their size (a `write` of a large
/// file already shows as a diff).
const MAX_RAW_STRING: usize = 4096;

/// The log in ACP v1, with the model catalog the config options are built from.
pub struct V1Log {
    catalog: Vec<ModelInfo>,
}

impl V1Log {
    pub fn new(catalog: Vec<ModelInfo>) -> Self {
        V1Log { catalog }
    }
}

impl LogFormat for V1Log {
    fn encode(&self, event: SessionEvent) -> Value {
        match event {
            SessionEvent::UserChunk {
                message_id,
                content,
                for_model,
            } => user_chunk(message_id, content, for_model),
            SessionEvent::MessageChunk { message_id, text } => typed(
                SessionUpdate::AgentMessageChunk(text_chunk(text, message_id)),
            ),
            SessionEvent::ThoughtChunk { message_id, text } => typed(
                SessionUpdate::AgentThoughtChunk(text_chunk(text, message_id)),
            ),
            SessionEvent::ToolCallStarted(start) => tool_call(&start),
            SessionEvent::ToolCallRejected {
                id,
                name,
                raw_input,
                message,
            } => json!({
                "sessionUpdate": "tool_call",
                "toolCallId": id,
                "title": name,
                "kind": "other",
                "status": "failed",
                "rawInput": raw_input,
                "name": name,
                "content": [text_content(&message)],
            }),
            SessionEvent::ToolCallRunning { id } => {
                tool_call_update(&id, json!({ "status": "in_progress" }))
            }
            SessionEvent::ToolCallOutput { id, delta } => json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": id,
                "_meta": { "terminal_output": { "terminal_id": id, "data": delta } },
            }),
            SessionEvent::ToolCallAlive { id, elapsed } => tool_call_update(
                &id,
                json!({
                    "status": "in_progress",
                    "_meta": { "hearth": { "elapsedMs": elapsed.as_millis() as u64 } },
                }),
            ),
            SessionEvent::ToolCallFinished { id, outcome } => {
                tool_call_update(&id, finished(&outcome))
            }
            SessionEvent::ToolCallProgress { id, text } => {
                tool_call_update(&id, json!({ "content": [text_content(&text)] }))
            }
            SessionEvent::Child { link, event } => attributed(self.encode(*event), &link),
            SessionEvent::SubagentState { link, title, state } => {
                subagent_update(&link, &title, &state)
            }
            SessionEvent::Delegated { link, from, prompt } => {
                let message = json!({
                    "sessionUpdate": "session_message",
                    "messageId": format!("{}-prompt", link.child_session_id),
                    "senderSessionId": from,
                    "recipientSessionId": link.child_session_id,
                    "content": [text_content_block(&prompt)],
                });
                attributed(message, &link)
            }
            SessionEvent::Plan(entries) => plan(&entries),
            SessionEvent::CompactionStarted { id, .. } => {
                compaction_update(&id, "in_progress", None, None)
            }
            SessionEvent::CompactionCompleted { id, figures, .. } => {
                compaction_update(&id, "completed", None, Some(figures))
            }
            // Only a failure says why: a cancel is the user's own doing.
            SessionEvent::CompactionEnded {
                id,
                end: CompactionEnd::Failed,
                message,
            } => compaction_update(&id, "failed", Some(message), None),
            SessionEvent::CompactionEnded {
                id,
                end: CompactionEnd::Cancelled,
                ..
            } => compaction_update(&id, "cancelled", None, None),
            SessionEvent::CompactionChunk { id, text } => json!({
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": id,
                "content": text_content_block(&text),
            }),
            SessionEvent::Usage {
                used,
                size,
                request,
                cost,
            } => usage_update(used, size, request, cost),
            SessionEvent::Title { title, updated_at } => typed(SessionUpdate::SessionInfoUpdate(
                SessionInfoUpdate::new().title(title).updated_at(updated_at),
            )),
            SessionEvent::ModelSilent { waited, updated_at } => {
                let meta = json!({ "hearth": { "waitingForModelMs": waited.as_millis() as u64 } });
                typed(SessionUpdate::SessionInfoUpdate(
                    SessionInfoUpdate::new()
                        .updated_at(updated_at)
                        .meta(meta.as_object().cloned()),
                ))
            }
            SessionEvent::ConfigChanged(settings) => typed(SessionUpdate::ConfigOptionUpdate(
                ConfigOptionUpdate::new(super::config::options(&settings, &self.catalog)),
            )),
            SessionEvent::ModeChanged(mode) => typed(SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(mode.id()),
            )),
            SessionEvent::AvailableCommands(commands) => available_commands(commands),
            SessionEvent::Notice { title, description } => typed(SessionUpdate::Notice(
                Notice::new(NoticeSeverity::Warning, title).description(description),
            )),
            SessionEvent::TurnFailed { failure, air } => {
                super::session_failure::encode(&failure, air)
            }
            SessionEvent::ServiceFailed { id, title, message } => json!({
                "sessionUpdate": "tool_call",
                "toolCallId": id,
                "title": title,
                "kind": "other",
                "status": "failed",
                "content": [text_content(&message)],
            }),
        }
    }

    fn decode(&self, update: &Value) -> Recorded {
        let kind = update.get("sessionUpdate").and_then(Value::as_str);
        match kind {
            Some("user_message_chunk") => user_part(update),
            Some(kind @ ("tool_call" | "tool_call_update")) => {
                let Some(id) = update.get("toolCallId").and_then(Value::as_str) else {
                    return Recorded::Other;
                };
                Recorded::ToolCall {
                    id: id.to_string(),
                    announced: kind == "tool_call",
                    status: update
                        .get("status")
                        .and_then(Value::as_str)
                        .map(call_status),
                }
            }
            _ => Recorded::Other,
        }
    }
}

/// A subagent's update (or the tool call of its permission request), marked as part of its
/// `task` call: `_meta.claudeCode.parentToolUseId`
/// (the key Zed and the Claude adapter's clients read) and `_meta.hearth`'s own names.
pub fn attributed(mut update: Value, link: &ChildLink) -> Value {
    let Some(fields) = update.as_object_mut() else {
        return update;
    };
    let meta = fields.entry("_meta").or_insert_with(|| json!({}));
    meta["claudeCode"] = json!({ "parentToolUseId": link.parent_tool_call_id });
    let mut hearth = json!({
        "parentToolCallId": link.parent_tool_call_id,
        "childSessionId": link.child_session_id,
        "agent": link.agent,
        "depth": link.depth,
    });
    if let Some(delegating) = &link.delegating_session_id {
        hearth["delegatingSessionId"] = json!(delegating);
    }
    match meta.get_mut("hearth").and_then(Value::as_object_mut) {
        Some(own) => own.extend(
            hearth
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.clone())),
        ),
        None => meta["hearth"] = hearth,
    }
    update
}

/// `subagent_update` (unstable ACP, RFD #1992): the child's association with its parent
/// session and its work state, a whole snapshot each time.
fn subagent_update(link: &ChildLink, title: &str, state: &ChildState) -> Value {
    let state = match state {
        ChildState::Running => json!({ "state": "running" }),
        ChildState::RequiresAction => json!({ "state": "requires_action" }),
        ChildState::Idle { stop_reason, usage } => json!({
            "state": "idle",
            "stopReason": stop_reason,
            "usage": {
                "totalTokens": usage.input_tokens + usage.output_tokens,
                "inputTokens": usage.input_tokens,
                "outputTokens": usage.output_tokens,
                "cachedReadTokens": usage.cached_read_tokens,
            },
        }),
    };
    let update = json!({
        "sessionUpdate": "subagent_update",
        "sessionId": link.child_session_id,
        "title": title,
        "description": link.agent,
        "capabilities": { "cancel": {} },
        "state": state,
    });
    attributed(update, link)
}

/// `available_commands_update`: each command's hint as unstructured input.
fn available_commands(commands: Vec<AvailableCommand>) -> Value {
    let commands = commands
        .into_iter()
        .map(|command| {
            let input = command.hint.map(|hint| {
                AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint))
            });
            AcpCommandEntry::new(command.name, command.description).input(input)
        })
        .collect();
    typed(SessionUpdate::AvailableCommandsUpdate(
        AvailableCommandsUpdate::new(commands),
    ))
}

fn typed(update: SessionUpdate) -> Value {
    serde_json::to_value(update).unwrap_or(Value::Null)
}

fn text_chunk(text: String, message_id: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
        .message_id(MessageId::new(message_id))
}

/// `content` is the block as `acp/prompt.rs` serialized it from its ACP type; the members
/// are in `ContentChunk`'s order (tested against it). A command's block is marked in `_meta`,
/// so that a restart does not hand it to the model either.
fn user_chunk(message_id: String, content: Value, for_model: bool) -> Value {
    let mut chunk = json!({
        "sessionUpdate": "user_message_chunk",
        "content": content,
        "messageId": message_id,
    });
    if !for_model {
        chunk["_meta"] = json!({ "hearth": { "command": true } });
    }
    chunk
}

fn is_command(update: &Value) -> bool {
    update.pointer("/_meta/hearth/command") == Some(&Value::Bool(true))
}

/// `usage_update`; the request's token counts go in `_meta.hearth`, named as the unstable
/// `Usage` of a prompt response names them (`thoughtTokens` when the provider reported them).
fn usage_update(used: u64, size: u64, request: Option<Usage>, cost: Option<Cost>) -> Value {
    let mut update = json!({ "sessionUpdate": "usage_update", "used": used, "size": size });
    if let Some(cost) = cost {
        update["cost"] = json!({ "amount": cost.amount, "currency": cost.currency });
    }
    if let Some(usage) = request {
        update["_meta"] = json!({ "hearth": {
            "inputTokens": usage.input + usage.cache_read + usage.cache_write,
            "outputTokens": usage.output,
            "cachedReadTokens": usage.cache_read,
            "cachedWriteTokens": usage.cache_write,
        } });
        if let Some(thoughts) = usage.thoughts {
            update["_meta"]["hearth"]["thoughtTokens"] = json!(thoughts);
        }
    }
    update
}

/// `compaction_update`; its figures go in `_meta.hearth` (the schema has no place for them).
fn compaction_update(
    id: &str,
    status: &str,
    error: Option<String>,
    figures: Option<CompactionFigures>,
) -> Value {
    let mut update = json!({
        "sessionUpdate": "compaction_update",
        "compactionId": id,
        "status": status,
    });
    if let Some(error) = error {
        update["error"] = json!(error);
    }
    if let Some(figures) = figures {
        update["_meta"] = json!({ "hearth": {
            "trigger": figures.trigger.name(),
            "preTokens": figures.tokens_before,
            "postTokens": figures.tokens_after,
        } });
    }
    update
}

fn user_part(update: &Value) -> Recorded {
    let message_id = update
        .get("messageId")
        .and_then(Value::as_str)
        .map(str::to_string);
    if is_command(update) {
        return Recorded::Command { message_id };
    }
    let part = update
        .get("content")
        .and_then(|c| serde_json::from_value::<ContentBlock>(c.clone()).ok())
        .and_then(|block| block_part(&block));
    match part {
        Some(part) => Recorded::UserPart { message_id, part },
        None => Recorded::Other,
    }
}

/// A logged prompt block as the model takes it. Images are logged prepared (`acp/images.rs`),
/// so their data is what the model gets.
fn block_part(block: &ContentBlock) -> Option<UserPart> {
    match block {
        ContentBlock::Image(image) if !image.data.is_empty() => Some(UserPart::Image(Image {
            mime_type: image.mime_type.clone(),
            data: image.data.clone(),
        })),
        _ => block_text(block).map(|text| UserPart::Text { text }),
    }
}

/// How a prompt block reads to the model. `None` for blocks we don't accept.
pub fn block_text(block: &ContentBlock) -> Option<String> {
    match block {
        ContentBlock::Text(t) => Some(t.text.clone()),
        ContentBlock::ResourceLink(link) => Some(format!("[{}]({})", link.name, link.uri)),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            EmbeddedResourceResource::TextResourceContents(r) => Some(format!(
                "<resource uri=\"{}\">\n{}\n</resource>",
                r.uri, r.text
            )),
            _ => None,
        },
        _ => None,
    }
}

fn call_status(status: &str) -> CallStatus {
    match status {
        "completed" => CallStatus::Completed,
        "failed" => CallStatus::Failed,
        "in_progress" => CallStatus::InProgress,
        _ => CallStatus::Pending,
    }
}

fn tool_call(start: &ToolCallStart) -> Value {
    let mut update = json!({
        "sessionUpdate": "tool_call",
        "toolCallId": start.id,
        "title": start.title,
        "kind": start.kind.as_str(),
        "status": "pending",
        "locations": locations(&start.locations),
        "rawInput": shrink_raw_input(&start.raw_input),
        "name": start.name,
    });
    let diffs = diff_content(&start.diffs);
    if !diffs.is_empty() {
        update["content"] = Value::Array(diffs);
    }
    update
}

fn locations(locations: &[Location]) -> Vec<Value> {
    locations
        .iter()
        .map(|l| match l.line {
            Some(line) => json!({ "path": l.path, "line": line }),
            None => json!({ "path": l.path }),
        })
        .collect()
}

fn tool_call_update(id: &str, fields: Value) -> Value {
    let mut update = json!({ "sessionUpdate": "tool_call_update", "toolCallId": id });
    if let (Some(target), Value::Object(fields)) = (update.as_object_mut(), fields) {
        target.extend(fields);
    }
    update
}

fn finished(outcome: &ToolOutcome) -> Value {
    match outcome {
        ToolOutcome::Completed {
            content,
            raw_output,
            meta,
        } => {
            let content = content.iter().map(tool_content).collect();
            let mut fields = json!({ "status": "completed", "content": bounded(content) });
            if let Some(raw) = raw_output {
                fields["rawOutput"] = raw.clone();
            }
            if let Some(meta) = meta {
                fields["_meta"] = json!({ "hearth": meta });
            }
            fields
        }
        ToolOutcome::Failed(message) => {
            json!({ "status": "failed", "content": [text_content(message)] })
        }
    }
}

fn plan(entries: &[PlanEntry]) -> Value {
    let entries: Vec<Value> = entries
        .iter()
        .map(|e| json!({ "content": e.content, "priority": e.priority, "status": e.status }))
        .collect();
    json!({ "sessionUpdate": "plan", "entries": entries })
}

/// ACP `ToolCallContent`.
fn tool_content(content: &ToolContent) -> Value {
    match content {
        ToolContent::Text(text) => text_content(text),
        ToolContent::Diff(diff) => diff_block(diff),
        ToolContent::Terminal(id) => json!({ "type": "terminal", "terminalId": id }),
        ToolContent::Image { mime_type, data } => json!({
            "type": "content",
            "content": { "type": "image", "data": data, "mimeType": mime_type },
        }),
        ToolContent::Link {
            uri,
            name,
            description,
        } => {
            let mut link = json!({ "type": "resource_link", "uri": uri, "name": name });
            if let Some(description) = description {
                link["description"] = json!(description);
            }
            json!({ "type": "content", "content": link })
        }
    }
}

pub fn text_content(text: &str) -> Value {
    json!({ "type": "content", "content": text_content_block(text) })
}

fn text_content_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

fn diff_block(diff: &Diff) -> Value {
    json!({ "type": "diff", "path": diff.path, "oldText": diff.old_text, "newText": diff.new_text })
}

/// The `diff` blocks of a change, bounded: for the tool call and the permission request.
pub fn diff_content(diffs: &[Diff]) -> Vec<Value> {
    bounded(diffs.iter().map(diff_block).collect())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::events::Recorded;

    fn decode(update: Value) -> Recorded {
        V1Log::new(Vec::new()).decode(&update)
    }

    #[test]
    fn user_chunks_decode_to_what_the_model_reads() {
        let text = json!({"sessionUpdate": "user_message_chunk", "messageId": "u1",
            "content": {"type": "text", "text": "fix it"}});
        assert_eq!(
            decode(text),
            Recorded::UserPart {
                message_id: Some("u1".into()),
                part: UserPart::Text {
                    text: "fix it".into()
                }
            }
        );
        let link = json!({"sessionUpdate": "user_message_chunk",
            "content": {"type": "resource_link", "name": "main.rs", "uri": "file:///w/main.rs"}});
        assert_eq!(
            decode(link),
            Recorded::UserPart {
                message_id: None,
                part: UserPart::Text {
                    text: "[main.rs](file:///w/main.rs)".into()
                }
            }
        );
        let image = json!({"sessionUpdate": "user_message_chunk", "messageId": "u1",
            "content": {"type": "image", "data": "AA==", "mimeType": "image/png", "uri": "file:///w/a.png"}});
        assert_eq!(
            decode(image),
            Recorded::UserPart {
                message_id: Some("u1".into()),
                part: UserPart::Image(Image {
                    mime_type: "image/png".into(),
                    data: "AA==".into()
                })
            }
        );
        // An image the log holds without its data gives the model nothing to look at.
        let empty = json!({"sessionUpdate": "user_message_chunk",
            "content": {"type": "image", "data": "", "mimeType": "image/png", "uri": "file:///w/a.png"}});
        assert_eq!(decode(empty), Recorded::Other);
        let agent = json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "done"}});
        assert_eq!(decode(agent), Recorded::Other);
    }

    #[test]
    fn tool_calls_decode_with_their_status() {
        let call = |id: &str, announced, status| Recorded::ToolCall {
            id: id.into(),
            announced,
            status,
        };
        assert_eq!(
            decode(json!({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A"})),
            call("a", true, None)
        );
        for (status, expected) in [
            ("pending", CallStatus::Pending),
            ("in_progress", CallStatus::InProgress),
            ("completed", CallStatus::Completed),
            ("failed", CallStatus::Failed),
        ] {
            assert_eq!(
                decode(
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": status})
                ),
                call("a", false, Some(expected))
            );
        }
        assert_eq!(
            decode(json!({"sessionUpdate": "tool_call_update", "status": "failed"})),
            Recorded::Other
        );
    }

    fn encoded(event: SessionEvent) -> String {
        V1Log::new(Vec::new()).encode(event).to_string()
    }

    /// Every event's wire shape, member order included: the log keeps these bytes.
    #[test]
    fn events_encode_to_their_v1_shapes() {
        let diff = Diff {
            path: "/w/a.rs".into(),
            old_text: None,
            new_text: "x".into(),
        };
        let start = ToolCallStart {
            id: "tc_1".into(),
            title: "Write a.rs".into(),
            kind: crate::tools::Kind::Edit,
            locations: vec![Location {
                path: "/w/a.rs".into(),
                line: Some(1),
            }],
            raw_input: json!({"path": "a.rs", "content": "x".repeat(5000)}),
            name: "write".into(),
            diffs: vec![diff.clone()],
        };
        assert_eq!(
            encoded(SessionEvent::ToolCallStarted(start)),
            r#"{"sessionUpdate":"tool_call","toolCallId":"tc_1","title":"Write a.rs","kind":"edit","status":"pending","locations":[{"path":"/w/a.rs","line":1}],"rawInput":{"path":"a.rs","content":"<5000 bytes>"},"name":"write","content":[{"type":"diff","path":"/w/a.rs","oldText":null,"newText":"x"}]}"#
        );
        let done = ToolOutcome::Completed {
            content: vec![
                ToolContent::Text("ok".into()),
                ToolContent::Terminal("term-1".into()),
                ToolContent::Diff(diff),
                ToolContent::Image {
                    mime_type: "image/png".into(),
                    data: "AA==".into(),
                },
            ],
            raw_output: Some(json!({"exitCode": 0})),
            meta: Some(json!({"sandbox": {"backend": "landlock ABI 7 + seccomp"}})),
        };
        assert_eq!(
            encoded(SessionEvent::ToolCallFinished {
                id: "tc_1".into(),
                outcome: done
            }),
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"tc_1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"ok"}},{"type":"terminal","terminalId":"term-1"},{"type":"diff","path":"/w/a.rs","oldText":null,"newText":"x"},{"type":"content","content":{"type":"image","data":"AA==","mimeType":"image/png"}}],"rawOutput":{"exitCode":0},"_meta":{"hearth":{"sandbox":{"backend":"landlock ABI 7 + seccomp"}}}}"#
        );
        assert_eq!(
            encoded(SessionEvent::ToolCallOutput {
                id: "tc_1".into(),
                delta: "hi\n".into()
            }),
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"tc_1","_meta":{"terminal_output":{"terminal_id":"tc_1","data":"hi\n"}}}"#
        );
        assert_eq!(
            encoded(SessionEvent::MessageChunk {
                message_id: "m1".into(),
                text: "Hel".into()
            }),
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hel"},"messageId":"m1"}"#
        );
        assert_eq!(
            encoded(SessionEvent::Usage {
                used: 5,
                size: 100,
                request: None,
                cost: None,
            }),
            r#"{"sessionUpdate":"usage_update","used":5,"size":100}"#
        );
        let request = Usage {
            input: 10,
            output: 5,
            cache_read: 80,
            cache_write: 20,
            thoughts: Some(3),
        };
        assert_eq!(
            encoded(SessionEvent::Usage {
                used: 115,
                size: 100,
                request: Some(request),
                cost: None,
            }),
            r#"{"sessionUpdate":"usage_update","used":115,"size":100,"_meta":{"hearth":{"inputTokens":110,"outputTokens":5,"cachedReadTokens":80,"cachedWriteTokens":20,"thoughtTokens":3}}}"#
        );
    }

    #[test]
    fn available_commands_carry_their_hints() {
        let commands = vec![
            AvailableCommand {
                name: "help".into(),
                description: "List the commands".into(),
                hint: None,
            },
            AvailableCommand {
                name: "model".into(),
                description: "Switch the model".into(),
                hint: Some("<model id>".into()),
            },
        ];
        assert_eq!(
            encoded(SessionEvent::AvailableCommands(commands)),
            r#"{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"help","description":"List the commands"},{"name":"model","description":"Switch the model","input":{"hint":"<model id>"}}]}"#
        );
    }

    #[test]
    fn compactions_are_compaction_updates() {
        use crate::session::events::CompactionTrigger;
        let id = || "cmp_1".to_string();
        let started = SessionEvent::CompactionStarted {
            id: id(),
            trigger: CompactionTrigger::Manual,
        };
        assert_eq!(
            encoded(started),
            r#"{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"in_progress"}"#
        );
        let figures = CompactionFigures {
            trigger: CompactionTrigger::Manual,
            tokens_before: 900,
            tokens_after: 100,
        };
        let completed = SessionEvent::CompactionCompleted {
            id: id(),
            summary: "Goal: x".into(),
            figures,
        };
        assert_eq!(
            encoded(completed),
            r#"{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"completed","_meta":{"hearth":{"trigger":"manual","preTokens":900,"postTokens":100}}}"#
        );
        let ended = |end| SessionEvent::CompactionEnded {
            id: id(),
            end,
            message: "HTTP 500".into(),
        };
        assert_eq!(
            encoded(ended(CompactionEnd::Failed)),
            r#"{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"failed","error":"HTTP 500"}"#
        );
        assert_eq!(
            encoded(ended(CompactionEnd::Cancelled)),
            r#"{"sessionUpdate":"compaction_update","compactionId":"cmp_1","status":"cancelled"}"#
        );
        assert_eq!(
            encoded(SessionEvent::CompactionChunk {
                id: "cmp_1".into(),
                text: "Goal: x".into()
            }),
            r#"{"sessionUpdate":"compaction_summary_chunk","compactionId":"cmp_1","content":{"type":"text","text":"Goal: x"}}"#
        );
    }

    /// A command's prompt is replayed, marked, and never read back as the model's.
    #[test]
    fn command_chunks_are_not_the_models() {
        let chunk = encoded(SessionEvent::UserChunk {
            message_id: "u1".into(),
            content: json!({"type": "text", "text": "/compact"}),
            for_model: false,
        });
        assert_eq!(
            chunk,
            r#"{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"/compact"},"messageId":"u1","_meta":{"hearth":{"command":true}}}"#
        );
        let update: Value = serde_json::from_str(&chunk).unwrap();
        assert_eq!(
            V1Log::new(Vec::new()).decode(&update),
            Recorded::Command {
                message_id: Some("u1".into())
            }
        );
    }

    #[test]
    fn user_chunks_are_what_the_typed_chunk_serializes_to() {
        let blocks = [
            json!({"type": "text", "text": "fix it", "annotations": {"priority": 1.0}}),
            json!({"type": "resource_link", "name": "a.rs", "uri": "file:///w/a.rs", "size": 3}),
            json!({"type": "resource", "resource": {"uri": "file:///w/a.rs", "text": "x", "mimeType": "text/x-rust"}}),
            json!({"type": "image", "data": "AA==", "mimeType": "image/png", "uri": "file:///w/a.png"}),
        ];
        for block in blocks {
            let typed_block: ContentBlock = serde_json::from_value(block).unwrap();
            let content = serde_json::to_value(&typed_block).unwrap();
            let chunk = ContentChunk::new(typed_block).message_id(MessageId::new("u1"));
            assert_eq!(
                user_chunk("u1".into(), content, true).to_string(),
                typed(SessionUpdate::UserMessageChunk(chunk)).to_string()
            );
        }
    }

    #[test]
    fn oversized_diffs_become_a_summary() {
        let big = Diff {
            path: "/w/big.txt".into(),
            old_text: Some("a".repeat(MAX_DIFF_BYTES)),
            new_text: "b".repeat(2048),
        };
        assert_eq!(
            diff_content(&[big]),
            vec![text_content(
                "/w/big.txt: a change of 258 KiB, too large to show as a diff"
            )]
        );
    }
}
