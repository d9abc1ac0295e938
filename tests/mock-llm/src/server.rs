//! The running server: a listener on its own thread and tokio runtime, so tests can start
//! it from sync code and from inside their own runtime alike.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::routes::{self, RecordedRequest, Shared};
use crate::script::{Response, Script};

/// A mock LLM server on 127.0.0.1. Dropping it stops the server.
pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockLlm {
    /// Starts on an ephemeral port.
    pub fn start(script: Script) -> io::Result<MockLlm> {
        MockLlm::start_on_port(script, 0)
    }

    /// Starts on `port` (0 picks a free one).
    pub fn start_on_port(script: Script, port: u16) -> io::Result<MockLlm> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        // One thread is plenty for a test double, and stalls are timers, not blocked threads.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = {
            // Registering the socket needs the runtime's context, but not a block_on, which
            // would panic when the caller is itself inside a runtime.
            let _context = runtime.enter();
            TcpListener::from_std(listener)?
        };
        let shared = Arc::new(Shared::new(script));
        let (shutdown, stop) = oneshot::channel();
        let serving = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(format!("mock-llm-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(serve(listener, serving, stop));
                // Dropping the runtime here drops every connection task, stalled or not.
            })?;
        Ok(MockLlm {
            addr,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT/v1`: OpenAI clients append `/chat/completions`, Anthropic
    /// clients `/messages`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Appends a response to the queue.
    pub fn push(&self, response: Response) {
        self.shared.append([response]);
    }

    /// The model requests received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests()
    }

    /// The newest model request (its body parsed alone, not every request's).
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.shared.last_request()
    }

    /// Responses not yet consumed.
    pub fn remaining(&self) -> usize {
        self.shared.remaining()
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            // An error means the server loop already ended; joining below still applies.
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread has already been reported on stderr.
            let _ = thread.join();
        }
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>, mut stop: oneshot::Receiver<()>) {
    let mut connections = 0;
    loop {
        let stream = tokio::select! {
            _ = &mut stop => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Per-connection failures (e.g. a reset before accept) must not end the server.
                Err(_) => continue,
            },
        };
        // Small replies must not wait on Nagle's algorithm for the client's delayed ACK (a
        // one-chunk stream otherwise takes ~40 ms on Linux).
        let _ = stream.set_nodelay(true);
        let shared = Arc::clone(&shared);
        connections += 1;
        let connection = connections;
        tokio::spawn(async move {
            let service = service_fn(|request| routes::handle(&shared, connection, request));
            // Connection errors are the client's business (or a scripted truncation).
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
