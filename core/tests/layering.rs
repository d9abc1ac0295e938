//! The layers of `core/src` hold themselves: this test reads every source file (inline tests
//! included) and fails on an import the rules below forbid. The rules are data; the map they
//! keep true is `docs/ARCHITECTURE.md`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The ACP schema crate, named like a module in the rules.
const SCHEMA: &str = "agent_client_protocol_schema";

/// `(module, what it must not import, why)`. A module is a top-level file or folder of
/// `core/src`; an import is a `crate::<module>` path or the schema crate.
const RULES: &[(&str, &[&str], &str)] = &[
    (
        "rpc",
        &["acp", "session", "agent", SCHEMA],
        "rpc/ is JSON-RPC only: it knows no ACP",
    ),
    (
        "llm",
        &["acp", "rpc", "store", "tools", "session", "agent", SCHEMA],
        "llm/ knows no protocol, store or tools",
    ),
    (
        "tools",
        &["llm", "acp", "rpc", "store", "agent", "session", SCHEMA],
        "tools/ know no model, protocol, store or turn",
    ),
    (
        "store",
        &[
            "acp",
            "rpc",
            "agent",
            "session",
            "permissions",
            "tools",
            SCHEMA,
        ],
        "store/ knows no protocol and no agent, and owns its row types",
    ),
    (
        "session",
        &["acp", "rpc", SCHEMA],
        "the domain is protocol-free: acp/ schedules work on sessions",
    ),
    (
        "agent",
        &["acp", "rpc", "outbox", SCHEMA],
        "the turn emits events to a sink and returns a typed outcome",
    ),
    (
        "permissions",
        &[
            "acp", "rpc", "store", "io", "session", "agent", "tools", SCHEMA,
        ],
        "permissions decide on what a call touches (access.rs); the caller resolves paths and reads rules",
    ),
    (
        "io",
        &["acp", "rpc", "session", "agent", "store", SCHEMA],
        "io/ is the workspace port: the edge picks the backend through Workspaces",
    ),
    (
        "context",
        &["acp", "rpc", SCHEMA],
        "the engine context is the domain's: the edge plugs in through Ports",
    ),
    (
        "outbox",
        &["acp", "rpc", "session", "agent", SCHEMA],
        "the outbox delivers frames and commits writes, nothing more",
    ),
    (
        "config",
        &["acp", "rpc", "session", "agent", "store", SCHEMA],
        "config is the one configuration type",
    ),
];

/// Modules that import nothing else of the crate.
const LEAVES: &[&str] = &["access", "chat", "images", "json_path", "net"];

/// Where the protocol may be named: the edge itself, and the engine that wires it in.
const PROTOCOL: &[(&str, &[&str])] = &[
    ("acp", &["acp", "engine"]),
    ("rpc", &["acp", "rpc", "engine"]),
    (SCHEMA, &["acp"]),
];

fn main_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as (path relative to `src`, text).
fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The top-level module a file belongs to: `acp/mod.rs` → `acp`, `engine.rs` → `engine`.
fn module_of(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap();
    first.strip_suffix(".rs").unwrap_or(first)
}

/// What a file imports: the `crate::<module>` paths (grouped ones too: `crate::{a, b::c}`),
/// `super::` paths that climb to the crate root, and the schema crate — outside comments.
fn imports(rel: &str, text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    // How many `super::` reach the crate root from this file: `tools/x.rs` → 2.
    let depth = rel.split('/').filter(|part| *part != "mod.rs").count();
    let root_by_super = "super::".repeat(depth);
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (at, _) in code.match_indices("crate::") {
            let before = code[..at].chars().last();
            // `hearth_crate::x` or the like is not ours.
            if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                found.extend(paths_after(&code[at + "crate::".len()..]));
            }
        }
        for (at, _) in code.match_indices(&root_by_super) {
            let rest = &code[at + root_by_super.len()..];
            if !rest.starts_with("super::") && (at == 0 || !code[..at].ends_with("super::")) {
                found.extend(paths_after(rest));
            }
        }
        if code.contains(SCHEMA) {
            found.insert(SCHEMA.to_string());
        }
    }
    found
}

/// The first segment of each path at the start of `rest`: `acp::x` → acp, `{a, b::c}` → a, b.
fn paths_after(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)]
            .into_iter()
            .filter(|n| !n.is_empty())
            .collect();
    };
    let mut names = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                names.push(ident(&group[start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                names.push(ident(&group[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    names.into_iter().filter(|n| !n.is_empty()).collect()
}

/// Every broken rule, one line each: file, import, rule.
fn violations(files: &[(String, String)]) -> Vec<String> {
    let mut broken = Vec::new();
    for (rel, text) in files {
        let module = module_of(rel);
        for import in imports(rel, text) {
            if import == module {
                continue;
            }
            for (owner, forbidden, why) in RULES {
                if *owner == module && forbidden.contains(&import.as_str()) {
                    broken.push(format!("{rel} imports {import}: {why}"));
                }
            }
            if LEAVES.contains(&module) {
                broken.push(format!("{rel} imports {import}: {module} is a leaf"));
            }
            for (name, allowed) in PROTOCOL {
                if import == *name && !allowed.contains(&module) {
                    broken.push(format!(
                        "{rel} imports {import}: only {} may name it",
                        allowed.join(", ")
                    ));
                }
            }
        }
    }
    broken
}

#[test]
fn core_src_keeps_its_layers() {
    let mut files = Vec::new();
    let root = main_src();
    sources(&root, &root, &mut files);
    assert!(files.len() > 50, "read {} files", files.len());
    let broken = violations(&files);
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

/// The checker itself: a planted violation of each kind is caught, and the allowed edges
/// are not.
#[test]
fn planted_violations_are_caught() {
    let file = |rel: &str, text: &str| (rel.to_string(), text.to_string());
    let planted = [
        file("tools/x.rs", "use crate::acp::updates;\nuse crate::io::Io;"),
        file(
            "session/y.rs",
            "fn f() { crate::rpc::RpcError::internal(\"x\"); }",
        ),
        file(
            "agent/z.rs",
            "use agent_client_protocol_schema::v1::StopReason;",
        ),
        file("chat.rs", "use crate::tools::Kind;"),
        file(
            "store/w.rs",
            "// a comment naming crate::acp is not an import\n",
        ),
        file(
            "engine.rs",
            "use crate::acp::Edge;\nuse crate::rpc::envelope;",
        ),
        file("io/v.rs", "use crate::{config::Config, rpc::RpcError};"),
        file(
            "agent/u/t.rs",
            "use super::super::super::acp::Edge;\nuse super::super::Turn;",
        ),
    ];
    let broken = violations(&planted);
    let expected = [
        "tools/x.rs imports acp: tools/ know no model, protocol, store or turn",
        "tools/x.rs imports acp: only acp, engine may name it",
        "session/y.rs imports rpc: the domain is protocol-free: acp/ schedules work on sessions",
        "session/y.rs imports rpc: only acp, rpc, engine may name it",
        "agent/z.rs imports agent_client_protocol_schema: the turn emits events to a sink and returns a typed outcome",
        "agent/z.rs imports agent_client_protocol_schema: only acp may name it",
        "chat.rs imports tools: chat is a leaf",
        "io/v.rs imports rpc: io/ is the workspace port: the edge picks the backend through Workspaces",
        "io/v.rs imports rpc: only acp, rpc, engine may name it",
        "agent/u/t.rs imports acp: the turn emits events to a sink and returns a typed outcome",
        "agent/u/t.rs imports acp: only acp, engine may name it",
    ];
    assert_eq!(broken, expected);
}
