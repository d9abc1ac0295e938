//! The engine's HTTP setup, shared by the model providers and the fetch tool: rustls with the
//! *ring* provider and the platform's certificate verifier, handed to reqwest preconfigured so
//! that embedding Hearth never touches the process-wide rustls default a host may rely on.

use std::sync::{Arc, OnceLock};

use reqwest::{Client, ClientBuilder};
use rustls_platform_verifier::BuilderVerifierExt;

/// The environment's proxy variables, as reqwest reads them (and as a sandboxed command is
/// pointed at Hearth's proxy: `io/process/proxy.rs`).
pub const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

fn tls_config() -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_platform_verifier()
        .map_err(|e| e.to_string())?
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

type Configure = Box<dyn Fn(ClientBuilder) -> ClientBuilder + Send + Sync>;

/// An HTTP client built on first use: loading the platform's certificates costs milliseconds
/// that an engine answering `initialize` and `session/new` should not pay, and a client
/// nobody uses should cost nothing.
pub struct LazyClient {
    client: OnceLock<Result<Client, String>>,
    configure: Configure,
}

impl LazyClient {
    /// `configure` adds the user's settings (timeouts, redirect policy) to a builder that
    /// already has the TLS setup and Hearth's user agent.
    pub fn new(configure: impl Fn(ClientBuilder) -> ClientBuilder + Send + Sync + 'static) -> Self {
        LazyClient {
            client: OnceLock::new(),
            configure: Box::new(configure),
        }
    }

    /// The client, or why it could not be built.
    pub fn get(&self) -> Result<&Client, String> {
        self.client
            .get_or_init(|| {
                let builder = Client::builder()
                    .tls_backend_preconfigured(tls_config()?)
                    .user_agent(concat!("hearth/", env!("CARGO_PKG_VERSION")));
                (self.configure)(builder).build().map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))
    }
}

/// The innermost cause of an HTTP error: reqwest's outer message ("error sending request")
/// says little; the connection's error, or the fetch guard's refusal, is at the bottom.
pub fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
