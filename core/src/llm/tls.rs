//! The TLS setup for provider HTTP clients: rustls with the *ring* provider and the
//! platform's certificate verifier, handed to reqwest preconfigured so that embedding Hearth
//! never touches the process-wide rustls default a host may rely on.

use std::sync::Arc;

use rustls_platform_verifier::BuilderVerifierExt;

pub fn client_config() -> Result<rustls::ClientConfig, String> {
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
