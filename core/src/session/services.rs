//! What one live session owns beyond its state: its tool registry (the built-in tools now; MCP
//! and language-server tools join it) and the way to its workspace (made per turn, since the
//! client's abilities may change and the turn's token withdraws its requests). `shutdown`
//! releases what the tools started, once: when the session is closed or deleted, when its
//! actor is replaced after a crash, and when the engine closes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

use crate::io::{self, ClientAbilities, ClientPort, Io};
use crate::tools::Registry;

pub struct SessionServices {
    session_id: Arc<str>,
    tools: Registry,
    client: Arc<dyn ClientPort>,
    shut_down: AtomicBool,
}

impl SessionServices {
    pub fn new(session_id: Arc<str>, tools: Registry, client: Arc<dyn ClientPort>) -> Self {
        SessionServices {
            session_id,
            tools,
            client,
            shut_down: AtomicBool::new(false),
        }
    }

    pub fn tools(&self) -> &Registry {
        &self.tools
    }

    /// The workspace of a turn: through the client for what it advertised, else local. The
    /// turn's token withdraws the client requests still pending when it is cancelled.
    pub fn workspace(&self, abilities: ClientAbilities, turn: &CancellationToken) -> Arc<dyn Io> {
        io::workspace(
            abilities,
            self.client.clone(),
            self.session_id.clone(),
            turn.clone(),
        )
    }

    /// Releases what the session's services started; later calls do nothing.
    pub fn shutdown(&self) {
        if !self.shut_down.swap(true, Ordering::AcqRel) {
            self.tools.shutdown();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use futures::future::BoxFuture;
    use serde_json::Value;
    use tokio::sync::mpsc::UnboundedSender;

    use super::*;
    use crate::chat::ToolSpec;
    use crate::io::ClientError;
    use crate::tools::{Context, Kind, Output, Prepared, Tool, ToolError};

    struct NoClient;

    impl ClientPort for NoClient {
        fn request<'a>(
            &'a self,
            _method: &'a str,
            _params: Value,
            _cancel: &'a CancellationToken,
        ) -> BoxFuture<'a, Result<Value, ClientError>> {
            unreachable!("no client request in these tests")
        }
    }

    /// A tool that only counts its shutdowns.
    #[derive(Default)]
    struct Counted(AtomicUsize);

    impl Tool for Arc<Counted> {
        fn spec(&self) -> ToolSpec {
            ToolSpec {
                name: "counted".into(),
                description: String::new(),
                parameters: Value::Null,
            }
        }
        fn kind(&self) -> Kind {
            Kind::Think
        }
        fn prepare<'a>(
            &'a self,
            _: &'a Value,
            _: &'a Context,
        ) -> BoxFuture<'a, Result<Prepared, ToolError>> {
            unreachable!()
        }
        fn run<'a>(
            &'a self,
            _: Prepared,
            _: &'a Context,
            _: UnboundedSender<String>,
        ) -> BoxFuture<'a, Result<Output, ToolError>> {
            unreachable!()
        }
        fn shutdown(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn shutdown_reaches_every_tool_once() {
        let counted = Arc::new(Counted::default());
        let tools = Registry::new(vec![Arc::new(counted.clone())]);
        let services = SessionServices::new(Arc::from("sess_1"), tools, Arc::new(NoClient));
        services.shutdown();
        services.shutdown();
        assert_eq!(counted.0.load(Ordering::SeqCst), 1);
    }
}
