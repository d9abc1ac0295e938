//! What a session is asked to connect: one MCP server, by name and transport. The protocol edge
//! turns ACP's `McpServer` entries (and the config's) into these.

/// One MCP server of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The name the user gave it: it names its tools (`mcp__<name>__<tool>`) and its reports.
    pub name: String,
    pub transport: Transport,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A local process speaking MCP on its stdin and stdout. `env` is added to Hearth's own
    /// environment. `sandbox`: its entry asked to run it confined (`"sandbox": true`, or
    /// `_meta.hearth.sandbox: true` in an ACP entry).
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        sandbox: bool,
    },
    /// A streamable-HTTP endpoint; `headers` go with every request.
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A transport Hearth does not speak (`sse`, `acp`): reported as a failed server, never
    /// dropped.
    Unsupported { kind: String },
    /// An entry that is not a server (`why`: which field, and what is wrong with it): reported
    /// as a failed server, never dropped.
    Malformed { why: String },
}
