//! `session/fork` (unstable): a new session whose log starts as a copy of its parent's — the
//! whole log, or the part before the prompt named in `_meta.hearth.fork.messageId` (or
//! JetBrains' `_meta.jetbrains.air.fork.messageId`; a prompt's message id is the `messageId`
//! of its `user_message_chunk`s). The fork comes up from the copy as a restored session
//! does, so its model context is the parent's as of the cut, and its replay is the copied
//! history. It keeps the parent's settings and system prompt text (unless the request
//! brings one), works in the request's roots, connects the request's MCP servers, and is
//! titled "<parent's title> (fork)" until its own first prompt names it. The store records
//! the lineage (`parent_id`, `fork_event_id`), which `session/list` shows in `_meta.hearth`;
//! deleting the parent leaves the fork whole, without a parent.
//!
//! A parent in the middle of a turn is copied as committed: everything logged before the
//! fork reached the store, the running turn included as far as it got. The fork then comes
//! up as an interrupted session does — its open tool calls closed as failed, calls without
//! results given a "not run" result in its context.
//!
//! Tests: end to end in `core/tests/fork.rs`.

use agent_client_protocol_schema::v1::{ForkSessionRequest, ForkSessionResponse, Meta};
use serde_json::{Value, json};

use super::opening::{after_answer, check_dirs, connect_servers, path_string, path_strings};
use super::responder::Responder;
use super::system_prompt::appended_text;
use super::{errors, mcp, schedule};
use crate::agent::title;
use crate::ids::new_id;
use crate::mcp::McpServerSpec;
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;
use crate::session::actor::{Job, LiveSession, Unavailable};
use crate::session::registry;
use crate::store::{SessionRecord, StoreOp, TitleSource, now};

/// Where a client may name the prompt to cut before, in the order they are read.
const CUT_POINTERS: [&str; 2] = ["/hearth/fork/messageId", "/jetbrains/air/fork/messageId"];

/// What the fork's own actor needs to answer once the copy is in the store.
struct ForkReply {
    responder: Responder,
    fork_id: String,
    requested: Vec<McpServerSpec>,
}

pub fn fork(responder: Responder, raw: Params<'_>) {
    let (mut request, requested): (ForkSessionRequest, _) = match mcp::params_with_servers(raw) {
        Ok(parsed) => parsed,
        Err(e) => return responder.respond(Err(e)),
    };
    // Everything the request alone can get wrong is refused before anything is written.
    let checked = check_dirs(&request.cwd, &request.additional_directories)
        .and_then(|()| appended_text(request.system_prompt.as_ref()))
        .and_then(|text| Ok((text, cut_point(request.meta.take())?)));
    let (client_system_prompt, cut) = match checked {
        Ok(checked) => checked,
        Err(e) => return responder.respond(Err(e)),
    };
    let parent_id = request.session_id.to_string();
    schedule(responder, parent_id, move |responder, parent| async move {
        let ctx = responder.ctx().clone();
        let settings = parent.session.state().settings.clone();
        if let Err(e) = crate::agent::check_credential(&ctx, &settings.model) {
            return responder.respond(Err(errors::turn_error(e)));
        }
        let before = match cut {
            None => None,
            Some(message_id) => match prompt_start(&parent, &message_id).await {
                Ok(Some(id)) => Some(id),
                Ok(None) => {
                    return responder.respond(Err(RpcError::invalid_params(format!(
                        "the fork's `messageId`: session `{}` has no prompt `{message_id}`",
                        parent.session.id
                    ))));
                }
                Err(e) => return responder.respond(Err(e)),
            },
        };
        let at = now();
        let (title, title_source) = {
            let state = parent.session.state();
            let inherited = state
                .title
                .as_deref()
                .map(|t| title::for_fork(t, state.title_source == Some(TitleSource::Fork)));
            let source = inherited.is_some().then_some(TitleSource::Fork);
            (inherited, source)
        };
        let fork = SessionRecord {
            id: new_id("sess"),
            cwd: path_string(&request.cwd),
            additional_dirs: path_strings(&request.additional_directories),
            title,
            created_at: at.clone(),
            updated_at: at,
            parent_id: Some(parent.session.id.to_string()),
            config: settings.to_value(),
            // The store's copy says whether a turn was running (see `store/fork.rs`).
            orphaned_turn: false,
            client_system_prompt: client_system_prompt
                .or_else(|| parent.session.state().client_system_prompt.clone()),
            title_source,
        };
        let fork_id = fork.id.clone();
        ctx.write(StoreOp::Fork { fork, before });
        // Queued behind the copy, the fork's first job restores it from the store; the answer
        // comes from there, so a request naming the fork finds it up.
        let answer = ForkReply {
            responder,
            fork_id: fork_id.clone(),
            requested,
        };
        registry::route(
            &ctx,
            &fork_id,
            Job::run(move |fork| Box::pin(answer.give(fork))),
        );
    });
}

impl ForkReply {
    async fn give(self, fork: Result<LiveSession, Unavailable>) {
        let ForkReply {
            responder,
            fork_id,
            requested,
        } = self;
        let live = match fork {
            Ok(live) => live,
            // The copy did not reach the store (it was logged): there is no fork to name.
            Err(Unavailable::NotFound) => {
                return responder.respond(Err(RpcError::internal("the fork could not be stored")));
            }
            Err(why) => return responder.respond(Err(errors::unavailable(&why, &fork_id))),
        };
        let ctx = responder.ctx().clone();
        let (servers, released) = connect_servers(&live, requested);
        let settings = live.session.state().settings.clone();
        let response = ForkSessionResponse::new(fork_id)
            .modes(super::config::modes(&settings))
            .config_options(super::config::options(&settings, ctx.catalog()))
            .meta(servers.as_deref().map(mcp::meta));
        responder.reply(Ok(response));
        after_answer(&live, servers.as_deref(), released);
    }
}

/// The prompt named as the cut point, if any; a name that is not a string is `-32602`.
fn cut_point(meta: Option<Meta>) -> Result<Option<String>, RpcError> {
    let Some(meta) = meta else { return Ok(None) };
    let meta = Value::Object(meta);
    for pointer in CUT_POINTERS {
        match meta.pointer(pointer) {
            None | Some(Value::Null) => continue,
            Some(Value::String(id)) => return Ok(Some(id.clone())),
            Some(_) => {
                return Err(RpcError::invalid_params(format!(
                    "`_meta{}` must be a string",
                    pointer.replace('/', ".")
                )));
            }
        }
    }
    Ok(None)
}

/// Where the prompt `message_id` begins in the parent's log, once its pending writes are in.
async fn prompt_start(parent: &LiveSession, message_id: &str) -> Result<Option<i64>, RpcError> {
    let (id, message_id) = (parent.session.id.clone(), message_id.to_string());
    let ctx = parent.session.ctx();
    ctx.read(move |log| log.prompt_start(&id, &message_id))
        .await
        .map_err(|e| RpcError::internal(format!("cannot read the session log: {e}")))
}

/// A forked session's lineage, for its `session/list` entry: `{"hearth": {parentSessionId,
/// forkedAt}}`, `forkedAt` being the id of the parent's last log entry the fork copied
/// (`null` when it copied none) — positions in one store's log, comparable, not meaningful
/// elsewhere.
pub fn lineage(parent_id: &str, fork_event_id: Option<i64>) -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        "hearth".into(),
        json!({ "parentSessionId": parent_id, "forkedAt": fork_event_id }),
    );
    meta
}
