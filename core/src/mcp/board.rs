//! The state of a session's servers, shared by their connection tasks, their tools and the
//! session: one lock over every server's state, so that each change publishes a consistent
//! snapshot to the subscribers.
//!
//! A server can be restarted (`/mcp reconnect`): each start of it is one `ServerRef` with a
//! stop token of its own, and a ref whose token fired changes nothing any more, so the task
//! of a connection that was let go can never overwrite the state of its successor.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{Prompt as McpPromptInfo, Tool as McpToolInfo};
use rmcp::service::Peer;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::running::Running;
use crate::io::process::Group;

/// How long a call that lost a stdio server waits for the exit to be reported.
const EXIT_REPORT: Duration = Duration::from_secs(1);

/// What the user is shown about one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Starting, or waiting for the handshake and the first tool list.
    Connecting,
    Connected {
        tools: usize,
    },
    /// It will not come back in this session; `reason` is written for the user.
    Failed {
        reason: String,
    },
}

/// What the engine holds of a server, beyond its status.
pub(super) enum Link {
    Connecting,
    Connected {
        peer: Peer<RoleClient>,
        tools: Arc<[McpToolInfo]>,
        /// Listed once, when it connected (a server's prompts are commands for the user).
        prompts: Arc<[McpPromptInfo]>,
    },
    Failed(String),
}

impl Link {
    fn state(&self) -> ServerState {
        match self {
            Link::Connecting => ServerState::Connecting,
            Link::Connected { tools, .. } => ServerState::Connected { tools: tools.len() },
            Link::Failed(reason) => ServerState::Failed {
                reason: reason.clone(),
            },
        }
    }
}

pub(super) struct Board {
    names: Vec<String>,
    links: Mutex<Vec<Link>>,
    groups: Mutex<Vec<Option<Arc<Group>>>>,
    /// One per server, for its current start: cancelled when that start is done with
    /// (failed, restarted, or shut down).
    stops: Mutex<Vec<CancellationToken>>,
    /// Cancelled by `shutdown`: nothing is reported after it.
    closing: CancellationToken,
    /// The calls running on each server (whichever start of it), for its questions.
    running: Vec<Arc<Running>>,
    status: watch::Sender<Vec<ServerStatus>>,
}

impl Board {
    pub fn new(names: Vec<String>) -> Self {
        let closing = CancellationToken::new();
        let status = names
            .iter()
            .map(|name| ServerStatus {
                name: name.clone(),
                state: ServerState::Connecting,
            })
            .collect();
        Board {
            links: Mutex::new(names.iter().map(|_| Link::Connecting).collect()),
            groups: Mutex::new(names.iter().map(|_| None).collect()),
            stops: Mutex::new(names.iter().map(|_| closing.child_token()).collect()),
            running: names.iter().map(|_| Arc::default()).collect(),
            names,
            closing,
            status: watch::channel(status).0,
        }
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn links(&self) -> MutexGuard<'_, Vec<Link>> {
        self.links.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn subscribe(&self) -> watch::Receiver<Vec<ServerStatus>> {
        self.status.subscribe()
    }

    pub fn status(&self) -> Vec<ServerStatus> {
        self.status.borrow().clone()
    }

    /// Stops every server: nothing is reported after this; each stdio group gets SIGTERM now
    /// and SIGKILL after a grace period, on a thread of its own. Returns the groups, to wait on.
    pub fn shutdown(&self) -> Vec<Arc<Group>> {
        self.closing.cancel();
        let groups: Vec<Arc<Group>> = self
            .groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .flatten()
            .cloned()
            .collect();
        for group in &groups {
            group.stop();
        }
        groups
    }

    /// The current start of server `index`.
    pub fn server(self: &Arc<Self>, index: usize) -> ServerRef {
        let stop = self.stops.lock().unwrap_or_else(|e| e.into_inner())[index].clone();
        ServerRef {
            board: self.clone(),
            index,
            stop,
        }
    }

    /// Lets server `index`'s current start go (its process group is stopped) and makes it
    /// `Connecting` again, for a new start through the returned ref; `None` once the session
    /// is closing.
    pub fn restart(self: &Arc<Self>, index: usize) -> Option<ServerRef> {
        let mut links = self.links();
        if self.closing.is_cancelled() {
            return None;
        }
        let stop = self.closing.child_token();
        let old = std::mem::replace(
            &mut self.stops.lock().unwrap_or_else(|e| e.into_inner())[index],
            stop.clone(),
        );
        old.cancel();
        let group = self.groups.lock().unwrap_or_else(|e| e.into_inner())[index].take();
        if let Some(group) = group {
            group.stop();
        }
        links[index] = Link::Connecting;
        self.status
            .send_modify(|status| status[index].state = ServerState::Connecting);
        Some(ServerRef {
            board: self.clone(),
            index,
            stop,
        })
    }

    /// Changes the state of `server`'s start unless it already failed, was let go, or the
    /// session is closing; `false` when it did not.
    fn set(&self, server: &ServerRef, link: Link) -> bool {
        let index = server.index;
        let mut links = self.links();
        if self.closing.is_cancelled()
            || server.stop.is_cancelled()
            || matches!(links[index], Link::Failed(_))
        {
            return false;
        }
        links[index] = link;
        let state = links[index].state();
        self.status
            .send_modify(|status| status[index].state = state);
        true
    }
}

/// One start of one server of a board: what its connection task and its tools act through.
#[derive(Clone)]
pub struct ServerRef {
    board: Arc<Board>,
    index: usize,
    /// This start's stop token (`Board::stops` holds the current start's).
    stop: CancellationToken,
}

impl ServerRef {
    pub fn name(&self) -> &str {
        &self.board.names[self.index]
    }

    /// The calls running on this server.
    pub fn running(&self) -> Arc<Running> {
        self.board.running[self.index].clone()
    }

    /// The process group of a stdio server, for `shutdown` (or a restart) to stop. A group
    /// registered after its start was let go is stopped at once.
    pub fn register(&self, group: Arc<Group>) {
        let mut groups = self.board.groups.lock().unwrap_or_else(|e| e.into_inner());
        if self.stop.is_cancelled() {
            drop(groups);
            return group.stop();
        }
        groups[self.index] = Some(group);
    }

    pub fn connected(
        &self,
        peer: Peer<RoleClient>,
        tools: Vec<McpToolInfo>,
        prompts: Arc<[McpPromptInfo]>,
    ) {
        let tools = tools.into();
        self.board.set(
            self,
            Link::Connected {
                peer,
                tools,
                prompts,
            },
        );
    }

    /// The server is gone for this session (until a restart): its state says why, and its
    /// connection ends.
    pub fn fail(&self, reason: String) {
        if self.board.set(self, Link::Failed(reason.clone())) {
            tracing::warn!(target: super::LOG_TARGET, server = %self.name(), "{reason}");
        }
        self.stop.cancel();
    }

    /// A call found the connection lost. A stdio server's connection task reports the exit
    /// (its status and last words) a moment later, which says more than this `reason`; an
    /// HTTP server has no process to watch, so `reason` is all there is.
    pub async fn lost(&self, reason: String) {
        let stdio =
            self.board.groups.lock().unwrap_or_else(|e| e.into_inner())[self.index].is_some();
        if stdio {
            let index = self.index;
            let mut status = self.board.subscribe();
            let exited = status.wait_for(|s| matches!(s[index].state, ServerState::Failed { .. }));
            let _ = tokio::time::timeout(EXIT_REPORT, exited).await;
        }
        self.fail(reason);
    }

    /// Why the server failed, if it did; a start that was let go for a new one says so.
    pub fn failure(&self) -> Option<String> {
        match &self.board.links()[self.index] {
            Link::Failed(reason) => Some(reason.clone()),
            _ if self.stop.is_cancelled() => Some("the server was reconnected".into()),
            _ => None,
        }
    }

    /// Resolves when this start is done with: it failed, was restarted, or the session is
    /// closing.
    pub async fn stopped(&self) {
        self.stop.cancelled().await
    }
}
