//! One server's connection, from start to end: start it (a process, or an HTTP client),
//! shake hands and list its tools (and prompts) within the startup timeout, then keep its tool list current
//! until it dies or the session lets it go. Every way it can end becomes a failure reason the
//! user can act on.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::service::{ClientInitializeError, Peer, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::{ServiceError, ServiceExt};
use tokio::sync::Notify;
use tokio::time::{Instant, timeout, timeout_at};

use super::board::ServerRef;
use super::handler::Handler;
use super::{Options, Transport};
use crate::io::process::{
    ChildKind, ServerSandbox, Spawned, exit_reason, exit_status, start_server,
};
use crate::net::LazyClient;

type Running = RunningService<RoleClient, Handler>;
type McpToolInfo = rmcp::model::Tool;
type McpPromptInfo = rmcp::model::Prompt;

/// What a server offers once it started.
struct Offer {
    tools: Vec<McpToolInfo>,
    prompts: Arc<[McpPromptInfo]>,
}

/// Runs server `server` for as long as the session keeps it; it must have started (shaken
/// hands and listed its tools) by `deadline`.
pub async fn run(
    server: ServerRef,
    transport: Transport,
    options: Arc<Options>,
    deadline: Instant,
) {
    let startup = Startup {
        deadline,
        limit: options.startup_timeout,
    };
    let handler = Handler {
        server: server.name().to_string(),
        tools_changed: Arc::new(Notify::new()),
        questions: options.questions.clone(),
        running: server.running(),
    };
    match transport {
        Transport::Unsupported { kind } => server.fail(format!(
            "the `{kind}` transport is not supported; use stdio or http"
        )),
        Transport::Malformed { why } => server.fail(format!("its entry is malformed: {why}")),
        Transport::Stdio {
            command,
            args,
            env,
            sandbox,
        } => {
            // The entry's own `env` is passed as given, provider keys it names included.
            let launcher = &options.launcher;
            let mut launch =
                launcher.launch(ChildKind::McpServer, &command, &args, &options.cwd, &env);
            // Held while the server runs: its temp dir goes with it.
            let confined = match confinement(sandbox, &options) {
                Ok(confined) => confined,
                Err(reason) => return server.fail(reason),
            };
            if let Some(confined) = &confined {
                confined.apply(&mut launch);
            }
            match start_server(launcher, server.name(), launch, log_stderr) {
                Ok(spawned) => {
                    let note = confined
                        .as_ref()
                        .zip(spawned.sandbox.as_deref())
                        .map(|(confined, backend)| confined.failure_note(backend, WAY_OUT))
                        .unwrap_or_default();
                    stdio(&server, spawned, handler, startup, &note).await
                }
                Err(reason) => server.fail(reason),
            }
        }
        Transport::Http { url, headers } => match http_transport(&url, &headers, &options.http) {
            Ok(transport) => http(&server, transport, handler, startup).await,
            Err(reason) => server.fail(reason),
        },
    }
}

/// How a confined stdio server runs unconfined, for its failure reason.
const WAY_OUT: &str = "its entry without `\"sandbox\": true` (and `sandbox.mcpServers` off)";

/// The sandbox of a stdio server whose entry asked for one (`asked`), or of every one with
/// `sandbox.mcpServers`; `None`: it runs unconfined, an integration the user chose.
fn confinement(asked: bool, options: &Options) -> Result<Option<ServerSandbox>, String> {
    if !asked && !options.sandbox.settings.confines_mcp_servers() {
        return Ok(None);
    }
    let roots: Vec<&std::path::Path> = options.roots.iter().map(|root| root.as_path()).collect();
    ServerSandbox::new(&options.sandbox, &roots, "mcp").map(Some)
}

/// A server's stderr line, to the MCP log target.
fn log_stderr(server: &str, line: &str) {
    tracing::info!(target: super::LOG_TARGET, server = %server, "{line}");
}

/// When a server must have started by, and the timeout that makes it so (for the reason).
#[derive(Clone, Copy)]
struct Startup {
    deadline: Instant,
    limit: Duration,
}

/// Why a server did not start.
struct StartError {
    reason: String,
    /// The server closed the connection: a stdio server then likely exited, and its exit
    /// status and last words say more than the handshake.
    hung_up: bool,
}

impl StartError {
    fn new(reason: String) -> Self {
        StartError {
            reason,
            hung_up: false,
        }
    }
}

/// Runs the started stdio server; a start that fails is reported with `note` (what its
/// sandbox adds) after the reason.
async fn stdio(
    server: &ServerRef,
    spawned: Spawned,
    handler: Handler,
    startup: Startup,
    note: &str,
) {
    let Spawned {
        mut child,
        stdin,
        stdout,
        group,
        stderr,
        ..
    } = spawned;
    server.register(group.clone());
    let tools_changed = handler.tools_changed.clone();
    match start(server, (stdout, stdin), handler, startup).await {
        None => {}
        Some(Err(StartError { reason, hung_up })) => {
            let exited = if hung_up {
                exit_status(&mut child).await
            } else {
                None
            };
            let reason = match exited {
                Some(status) => exit_reason(Some(status), &stderr).await,
                None => reason,
            };
            server.fail(reason + note);
        }
        Some(Ok((running, offer))) => {
            let peer = running.peer().clone();
            let died = async {
                let status = tokio::select! {
                    status = child.wait() => status.ok(),
                    _ = running.waiting() => exit_status(&mut child).await,
                };
                exit_reason(status, &stderr).await
            };
            keep(server, peer, offer, &tools_changed, died, startup.limit).await;
        }
    }
    // The server's children outlive it otherwise, whether it exited or was let go.
    group.stop();
    // Reaping the leader lets the group be seen empty before its grace period ends.
    exit_status(&mut child).await;
}

async fn http(
    server: &ServerRef,
    transport: StreamableHttpClientTransport<reqwest::Client>,
    handler: Handler,
    startup: Startup,
) {
    let tools_changed = handler.tools_changed.clone();
    match start(server, transport, handler, startup).await {
        None => {}
        Some(Err(error)) => server.fail(error.reason),
        Some(Ok((running, offer))) => {
            let peer = running.peer().clone();
            // rmcp's HTTP service does not end when the server dies (its calls fail instead,
            // and the tools report that); it ends when the server closes the session.
            let died = async {
                let _ = running.waiting().await;
                "the server ended the MCP session".to_owned()
            };
            keep(server, peer, offer, &tools_changed, died, startup.limit).await;
        }
    }
}

/// The handshake, the first tool list and the prompts, by the deadline; `None` when the
/// session let the server go first.
async fn start<T, E, A>(
    server: &ServerRef,
    transport: T,
    handler: Handler,
    startup: Startup,
) -> Option<Result<(Running, Offer), StartError>>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let within = seconds(startup.limit);
    let started = async {
        let running = match timeout_at(startup.deadline, handler.serve(transport)).await {
            Err(_) => {
                let reason = format!("did not answer the MCP handshake within {within}");
                return Err(StartError::new(reason));
            }
            Ok(result) => result.map_err(handshake_failure)?,
        };
        let failed = |reason: String| Err(StartError::new(reason));
        let tools = match timeout_at(startup.deadline, list(running.peer())).await {
            Err(_) => return failed(format!("did not list its tools within {within}")),
            Ok(Err(e)) => {
                return failed(format!("listing its tools failed: {}", service_error(&e)));
            }
            Ok(Ok(tools)) => tools,
        };
        let prompts = match timeout_at(startup.deadline, prompts(running.peer())).await {
            Err(_) => return failed(format!("did not list its prompts within {within}")),
            Ok(Err(e)) => {
                return failed(format!("listing its prompts failed: {}", service_error(&e)));
            }
            Ok(Ok(prompts)) => prompts.into(),
        };
        Ok((running, Offer { tools, prompts }))
    };
    tokio::select! {
        () = server.stopped() => None,
        started = started => Some(started),
    }
}

/// Publishes the server's tools and prompts, and re-lists the tools on every
/// `tools/list_changed`, until the server dies (`died` says why) or is let go.
async fn keep(
    server: &ServerRef,
    peer: Peer<RoleClient>,
    offer: Offer,
    tools_changed: &Notify,
    died: impl Future<Output = String>,
    list_timeout: Duration,
) {
    let Offer { tools, prompts } = offer;
    server.connected(peer.clone(), tools, prompts.clone());
    tokio::pin!(died);
    loop {
        tokio::select! {
            () = server.stopped() => return,
            reason = &mut died => return server.fail(reason),
            () = tools_changed.notified() => match timeout(list_timeout, list(&peer)).await {
                Ok(Ok(tools)) => server.connected(peer.clone(), tools, prompts.clone()),
                Ok(Err(e)) if lost(&e) => return server.fail(unavailable(&e)),
                // The old list stays: a server that cannot list now may answer calls.
                Ok(Err(e)) => warn(server, &format!("re-listing its tools failed: {}", service_error(&e))),
                Err(_) => warn(server, "re-listing its tools timed out"),
            },
        }
    }
}

fn warn(server: &ServerRef, message: &str) {
    tracing::warn!(target: super::LOG_TARGET, server = %server.name(), "{message}");
}

/// Every page of the server's tools; none from a server without the tools capability.
async fn list(peer: &Peer<RoleClient>) -> Result<Vec<McpToolInfo>, ServiceError> {
    let has_tools = peer
        .peer_info()
        .is_none_or(|info| info.capabilities.tools.is_some());
    if !has_tools {
        return Ok(Vec::new());
    }
    peer.list_all_tools().await
}

/// Every page of the server's prompts; none from a server without the prompts capability.
async fn prompts(peer: &Peer<RoleClient>) -> Result<Vec<McpPromptInfo>, ServiceError> {
    let has_prompts = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.prompts.is_some());
    if !has_prompts {
        return Ok(Vec::new());
    }
    peer.list_all_prompts().await
}

/// Whether `error` means the connection is gone (a dead HTTP server shows only this way).
pub fn lost(error: &ServiceError) -> bool {
    matches!(
        error,
        ServiceError::TransportSend(_) | ServiceError::TransportClosed
    )
}

/// The failure reason for a lost connection.
pub fn unavailable(error: &ServiceError) -> String {
    format!("the server stopped answering: {}", service_error(error))
}

/// A service error in words, with the causes of a transport error (the connection refused,
/// the broken pipe) rather than rmcp's names for its transports.
pub fn service_error(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(e) => e.message.to_string(),
        ServiceError::TransportSend(e) => causes(e.error.as_ref()),
        ServiceError::TransportClosed => "the connection is closed".into(),
        other => other.to_string(),
    }
}

fn handshake_failure(error: ClientInitializeError) -> StartError {
    let hung_up = matches!(
        error,
        ClientInitializeError::ConnectionClosed(_) | ClientInitializeError::TransportError { .. }
    );
    StartError {
        reason: handshake_reason(error),
        hung_up,
    }
}

fn handshake_reason(error: ClientInitializeError) -> String {
    match error {
        ClientInitializeError::ConnectionClosed(_) => {
            "the server closed the connection during the MCP handshake".into()
        }
        ClientInitializeError::JsonRpcError(e) => {
            format!("the server refused the MCP handshake: {}", e.message)
        }
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => format!("the server speaks no MCP version Hearth knows ({server_supported:?})"),
        ClientInitializeError::TransportError { error, .. } => {
            format!("cannot reach the server: {}", causes(error.error.as_ref()))
        }
        other => format!("the MCP handshake failed: {other}"),
    }
}

/// `error` and its sources, `: `-separated, without repeats (reqwest's messages often end with
/// their source's).
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    // rmcp wraps the HTTP client's error without naming it as the source.
    if let Some(StreamableHttpError::Client(inner)) =
        error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
    {
        return causes(inner);
    }
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// "30 s", "0.5 s".
fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.1} s")
    }
}

fn http_transport(
    url: &str,
    headers: &[(String, String)],
    http: &LazyClient,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let parsed = Url::parse(url).map_err(|e| format!("`{url}` is not a valid URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("`{url}` is not an http or https URL"));
    }
    let headers = headers
        .iter()
        .map(|(name, value)| {
            let invalid =
                |e: &dyn std::fmt::Display| format!("the header `{name}` is invalid: {e}");
            Ok((
                HeaderName::try_from(name.as_str()).map_err(|e| invalid(&e))?,
                HeaderValue::try_from(value.as_str()).map_err(|e| invalid(&e))?,
            ))
        })
        .collect::<Result<HashMap<_, _>, String>>()?;
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
    // Never `from_uri`: it builds rmcp's own client, which panics under the engine's TLS setup.
    Ok(StreamableHttpClientTransport::with_client(
        http.get()?.clone(),
        config,
    ))
}

/// The HTTP client of MCP servers: the engine's TLS setup, no redirects (a server's session
/// lives at one URL, and its headers may carry credentials), no overall timeout (a streamed
/// answer can take as long as its tool).
pub fn http_client() -> LazyClient {
    LazyClient::new(|builder| builder.redirect(reqwest::redirect::Policy::none()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_a_person_wrote_them() {
        assert_eq!(seconds(Duration::from_secs(30)), "30 s");
        assert_eq!(seconds(Duration::from_millis(500)), "0.5 s");
    }
}
