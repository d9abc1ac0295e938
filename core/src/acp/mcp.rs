//! The MCP servers a client hands over in `session/new`, `load` and `resume` (and the config's
//! own, in the same shape), read one by one: a malformed entry, or a transport Hearth does not
//! speak, becomes a server that is reported as failed — it never fails the request, and never
//! takes its healthy siblings with it.

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use agent_client_protocol_schema::v1::{McpServer, McpServerHttp, McpServerStdio};
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::responder::params;
use crate::context::EngineContext;
use crate::mcp::{
    McpServerSpec, McpServers, Options, Questions, ServerState, ServerStatus, Transport,
};
use crate::question::{Asker, Question, Reply};
use crate::rpc::RpcError;
use crate::rpc::envelope::Params;
use tokio_util::sync::CancellationToken;

/// The request's params without its `mcpServers` entries, typed, and those entries as specs.
/// The list itself stays (empty) so a request that lacks it is refused as before.
pub fn params_with_servers<T: DeserializeOwned>(
    raw: Params<'_>,
) -> Result<(T, Vec<McpServerSpec>), RpcError> {
    let mut tree: Value = match serde_json::from_str(raw.get()) {
        Ok(tree) => tree,
        Err(_) => return params::<T>(raw).map(|request| (request, Vec::new())),
    };
    let entries = match tree.get_mut("mcpServers") {
        Some(Value::Array(entries)) => std::mem::take(entries),
        _ => return params::<T>(raw).map(|request| (request, Vec::new())),
    };
    let rest = RawValue::from_string(tree.to_string())
        .map_err(|e| RpcError::internal(format!("cannot re-read the params: {e}")))?;
    let request = params::<T>(&rest)?;
    Ok((request, specs(&entries)))
}

/// Each entry as a spec, in order.
pub fn specs(entries: &[Value]) -> Vec<McpServerSpec> {
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| spec(i, entry))
        .collect()
}

fn spec(index: usize, entry: &Value) -> McpServerSpec {
    let name = entry
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.trim().is_empty())
        .map_or_else(|| format!("server {}", index + 1), str::to_string);
    let unsupported = |kind: String| McpServerSpec {
        name: name.clone(),
        transport: Transport::Unsupported { kind },
    };
    // Transports this agent does not advertise are named as such, not as malformed.
    if let Some(kind @ ("sse" | "acp")) = entry.get("type").and_then(Value::as_str) {
        return unsupported(kind.to_string());
    }
    match serde_json::from_value::<McpServer>(entry.clone()) {
        Ok(McpServer::Stdio(stdio)) => McpServerSpec {
            name,
            transport: Transport::Stdio {
                command: stdio.command.to_string_lossy().into_owned(),
                args: stdio.args,
                env: stdio.env.into_iter().map(|v| (v.name, v.value)).collect(),
                sandbox: asks_for_sandbox(entry),
            },
        },
        Ok(McpServer::Http(http)) => McpServerSpec {
            name,
            transport: Transport::Http {
                url: http.url,
                headers: http
                    .headers
                    .into_iter()
                    .map(|h| (h.name, h.value))
                    .collect(),
            },
        },
        Ok(_) => unsupported("this transport".into()),
        Err(_) => McpServerSpec {
            name,
            transport: Transport::Malformed {
                why: malformed(entry),
            },
        },
    }
}

/// Why `entry` is not a server, naming the field: read as the transport its `type` names (an
/// HTTP one, else stdio) — serde says only that no kind of server matched.
fn malformed(entry: &Value) -> String {
    let mut entry = entry.clone();
    let error = match entry.get("type").and_then(Value::as_str) {
        Some("http") => {
            if let Some(fields) = entry.as_object_mut() {
                fields.remove("type");
            }
            crate::json_path::from_value::<McpServerHttp>(entry).err()
        }
        _ => crate::json_path::from_value::<McpServerStdio>(entry).err(),
    };
    error.map_or_else(|| "not a server entry".into(), |e| e.to_string())
}

/// Whether a stdio entry asks to run confined: `"sandbox": true` (Hearth's own config) or
/// `"_meta": {"hearth": {"sandbox": true}}` (an ACP client's entry, whose fields are the
/// protocol's).
fn asks_for_sandbox(entry: &Value) -> bool {
    entry.get("sandbox") == Some(&Value::Bool(true))
        || entry.pointer("/_meta/hearth/sandbox") == Some(&Value::Bool(true))
}

/// Starts connecting the config's servers and the request's for a session working in `cwd`
/// (its other roots `additional_dirs`, writable by a confined server as they are by its
/// commands); `None` when there are none.
pub fn connect(
    ctx: &Arc<EngineContext>,
    session_id: &str,
    requested: Vec<McpServerSpec>,
    cwd: &str,
    additional_dirs: &[String],
) -> Option<Arc<McpServers>> {
    let mut all = specs(&ctx.config().mcp_servers);
    all.extend(requested);
    if all.is_empty() {
        return None;
    }
    let options = Options {
        startup_timeout: ctx.config().mcp_startup_timeout(),
        http: ctx.tool_deps().mcp_http.clone(),
        launcher: ctx.tool_deps().launcher.clone(),
        cwd: PathBuf::from(cwd),
        roots: std::iter::once(cwd)
            .chain(additional_dirs.iter().map(String::as_str))
            .map(PathBuf::from)
            .collect(),
        sandbox: ctx.resolved().sandbox.clone(),
        questions: Some(Questions {
            session_id: session_id.to_string(),
            asker: Arc::new(CurrentClient(Arc::downgrade(ctx))),
        }),
    };
    Some(Arc::new(McpServers::connect(all, options, ctx.runtime())))
}

/// Asks whichever client is connected when a server asks: a session outlives the
/// `initialize` it was opened under. Weak, as the engine holds the servers that hold it. A
/// question asked while a turn runs (a tool call's) is withdrawn when that turn is cancelled,
/// as well as when the server withdraws it.
struct CurrentClient(Weak<EngineContext>);

impl Asker for CurrentClient {
    fn ask<'a>(
        &'a self,
        session_id: &'a str,
        question: &'a Question,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Reply> {
        Box::pin(async move {
            let Some(ctx) = self.0.upgrade() else {
                return Reply::CannotAsk("the engine is closing".into());
            };
            let withdrawn = cancel.child_token();
            let turn = ctx.sessions().running_turn(session_id).unwrap_or_default();
            let asker = ctx.asker();
            let asking = asker.ask(session_id, question, &withdrawn);
            tokio::pin!(asking);
            tokio::select! {
                reply = &mut asking => reply,
                () = turn.cancelled() => {
                    withdrawn.cancel();
                    asking.await
                }
            }
        })
    }
}

/// The servers' states for a session response's `_meta` (what `/mcp` will show):
/// `{"hearth": {"mcpServers": [{name, status, tools | reason}]}}`.
pub fn meta(servers: &McpServers) -> serde_json::Map<String, Value> {
    let servers: Vec<Value> = servers.status().iter().map(server_meta).collect();
    let mut meta = serde_json::Map::new();
    meta.insert("hearth".into(), json!({ "mcpServers": servers }));
    meta
}

fn server_meta(server: &ServerStatus) -> Value {
    match &server.state {
        ServerState::Connecting => json!({ "name": server.name, "status": "connecting" }),
        ServerState::Connected { tools } => {
            json!({ "name": server.name, "status": "connected", "tools": tools })
        }
        ServerState::Failed { reason } => {
            json!({ "name": server.name, "status": "failed", "reason": reason })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_becomes_a_server_whatever_its_shape() {
        let entries = vec![
            json!({"name": "files", "command": "/bin/fs", "args": ["-v"], "env": [{"name": "A", "value": "1"}]}),
            json!({"name": "own", "command": "/bin/own", "args": [], "env": [], "sandbox": true}),
            json!({"name": "acp", "command": "/bin/acp", "args": [], "env": [], "_meta": {"hearth": {"sandbox": true}}}),
            json!({"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "X", "value": "y"}]}),
            json!({"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}),
            json!({"type": "acp", "name": "inproc", "id": "x"}),
            json!({"name": "broken", "command": 7}),
            json!(42),
            json!({"name": "nocmd"}),
            json!({"type": "http", "name": "h", "url": "http://127.0.0.1:9/", "headers": [{"name": "X", "value": 1}]}),
        ];
        let specs = specs(&entries);
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "files", "own", "acp", "web", "old", "inproc", "broken", "server 8", "nocmd", "h"
            ]
        );
        assert_eq!(
            specs[0].transport,
            Transport::Stdio {
                command: "/bin/fs".into(),
                args: vec!["-v".into()],
                env: vec![("A".into(), "1".into())],
                sandbox: false,
            }
        );
        for opted in &specs[1..3] {
            assert!(
                matches!(opted.transport, Transport::Stdio { sandbox: true, .. }),
                "{opted:?}"
            );
        }
        let specs = [&specs[..1], &specs[3..]].concat();
        assert_eq!(
            specs[1].transport,
            Transport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: vec![("X".into(), "y".into())]
            }
        );
        assert_eq!(
            specs[2].transport,
            Transport::Unsupported { kind: "sse".into() }
        );
        assert_eq!(
            specs[3].transport,
            Transport::Unsupported { kind: "acp".into() }
        );
        let whys: Vec<&str> = specs[4..]
            .iter()
            .map(|spec| match &spec.transport {
                Transport::Malformed { why } => why.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(whys.len(), 4);
        assert!(
            whys[0].starts_with("`command`: invalid type: integer `7`"),
            "{whys:?}"
        );
        assert!(
            whys[1].starts_with("invalid type: integer `42`"),
            "{whys:?}"
        );
        assert!(whys[2].starts_with("missing field `command`"), "{whys:?}");
        assert!(
            whys[3].starts_with("`headers[0].value`: invalid type"),
            "{whys:?}"
        );
    }
}
