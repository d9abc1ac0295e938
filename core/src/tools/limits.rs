//! The bounds on what tools read, keep and wait for, and how the config's `tools` section
//! sets them.

use std::time::Duration;

use crate::config::ToolsConfig;

/// Bounds on what tools read, keep and wait for.
#[derive(Debug, Clone)]
pub struct Limits {
    pub read_max_lines: usize,
    pub read_max_bytes: usize,
    pub command_timeout: Duration,
    pub output_limit: usize,
    pub fetch_max_bytes: usize,
    pub fetch_timeout: Duration,
    pub search_max_results: usize,
    /// The longest a running call goes without an update to the client.
    pub liveness: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            read_max_lines: 2000,
            read_max_bytes: 256 * 1024,
            command_timeout: Duration::from_secs(120),
            output_limit: 64 * 1024,
            fetch_max_bytes: 512 * 1024,
            fetch_timeout: Duration::from_secs(30),
            search_max_results: 200,
            liveness: Duration::from_secs(30),
        }
    }
}

/// The defaults, with each bound the config names in its place.
impl From<&ToolsConfig> for Limits {
    fn from(config: &ToolsConfig) -> Limits {
        let mut limits = Limits::default();
        if let Some(secs) = config.command_timeout_secs {
            limits.command_timeout = Duration::from_secs(secs);
        }
        if let Some(bytes) = config.output_limit_bytes {
            limits.output_limit = bytes;
        }
        if let Some(lines) = config.read_max_lines {
            limits.read_max_lines = lines;
        }
        if let Some(bytes) = config.fetch_max_bytes {
            limits.fetch_max_bytes = bytes;
        }
        if let Some(secs) = config.liveness_secs {
            limits.liveness = Duration::from_secs(secs);
        }
        limits
    }
}
