//! The layers of `core/src` hold themselves: this test reads every source file (inline tests
//! included) and fails on an import the rules below forbid. The rules are data; the map they
//! keep true is `docs/ARCHITECTURE.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The ACP schema crate, named like a module in the rules.
const SCHEMA: &str = "agent_client_protocol_schema";

/// What a client stack (`mcp`, `lsp`) must not import: it serves the tools, so it knows none
/// of them, and no model, store, turn or protocol.
const CLIENT_STACK: &[&str] = &[
    "tools",
    "llm",
    "acp",
    "rpc",
    "store",
    "agent",
    "session",
    "permissions",
    SCHEMA,
];

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
        "mcp",
        CLIENT_STACK,
        "mcp/ is the MCP client stack: it serves the tools (tools/mcp/ wraps what it lists) and knows no tool, model, store, turn or protocol",
    ),
    (
        "lsp",
        CLIENT_STACK,
        "lsp/ is the language-server client stack: it serves the tools (a call opens files as an lsp::Caller) and knows no tool, model, store, turn or protocol",
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
        &["acp", "rpc", "session", "agent", "store", "tools", SCHEMA],
        "config is the one configuration type: the tools build their limits from it",
    ),
];

/// Modules that import nothing else of the crate.
const LEAVES: &[&str] = &[
    "sandbox",
    "access",
    "chat",
    "front_matter",
    "ids",
    "images",
    "json_path",
    "lineage",
    "net",
    "question",
    "text",
];

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
    // How many `super::` reach the crate root from this file: `tools/x.rs` → 2.
    let depth = rel.split('/').filter(|part| *part != "mod.rs").count();
    let mut found = paths_from(text, "crate::", depth);
    if text.lines().any(|line| code_of(line).contains(SCHEMA)) {
        found.insert(SCHEMA.to_string());
    }
    found
}

/// A line without its comment.
fn code_of(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// The first segments of the paths that start at one module, written either from the crate
/// (`absolute`, e.g. `crate::` or `crate::store::`) or as exactly `supers` `super::`s.
fn paths_from(text: &str, absolute: &str, supers: usize) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let by_super = "super::".repeat(supers);
    for line in text.lines() {
        let code = code_of(line);
        for (at, _) in code.match_indices(absolute) {
            let before = code[..at].chars().last();
            // `hearth_crate::x` or the like is not ours.
            if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                found.extend(paths_after(&code[at + absolute.len()..]));
            }
        }
        for (at, _) in code.match_indices(&by_super) {
            let rest = &code[at + by_super.len()..];
            if !rest.starts_with("super::") && (at == 0 || !code[..at].ends_with("super::")) {
                found.extend(paths_after(rest));
            }
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

/// Import edges that may close a cycle, `(from, to, why)`: a top-level module (`agent`) or a
/// child of one (`store/fork`). They are left out before cycles are looked for, and each must
/// still exist, so a cut edge leaves the list with it.
const ALLOWED_EDGES: &[(&str, &str, &str)] = &[
    (
        "session",
        "agent",
        "the turn queue runs agent::run_turn, and a turn works on its Session",
    ),
    (
        "context",
        "session",
        "the context owns the registry of live sessions (Sessions), and their actors run with \
         the context",
    ),
    (
        "session/registry",
        "session/actor",
        "the registry starts each session's actor and queues its jobs; an ended actor hands \
         the jobs queued behind its end back to the registry: one mechanism in two files",
    ),
];

/// Import edges, `(from, to)` → the files that import: between top-level modules, and between
/// the children of one top-level module (`acp/fork` → `acp/session`). The two levels share no
/// node, so one graph holds both.
type Edges = BTreeMap<(String, String), BTreeSet<String>>;

/// A file's code as the cycle check reads it: without its inline `mod tests`, and nothing at
/// all for a file of tests or test helpers, since tests may import what they test.
fn without_tests<'t>(rel: &str, text: &'t str) -> Option<&'t str> {
    let name = rel.rsplit('/').next().unwrap();
    if name == "tests.rs" || name == "testing.rs" {
        return None;
    }
    let inline = ["#[cfg(test)]\nmod tests {", "#[cfg(test)]\r\nmod tests {"];
    let end = inline
        .iter()
        .filter_map(|marker| text.find(marker))
        .min()
        .unwrap_or(text.len());
    Some(&text[..end])
}

/// The edges between top-level modules.
fn module_edges(files: &[(String, String)]) -> Edges {
    let mut edges = Edges::new();
    for (rel, text) in files {
        let Some(code) = without_tests(rel, text) else {
            continue;
        };
        let module = module_of(rel);
        for import in imports(rel, code) {
            if import != module && import != SCHEMA {
                let edge = (module.to_string(), import);
                edges.entry(edge).or_default().insert(rel.clone());
            }
        }
    }
    edges
}

/// The edges between the children of each top-level folder: `store/fork.rs` naming
/// `super::sessions` or `crate::store::sessions` is `store/fork` → `store/sessions`. A folder's
/// `mod.rs` is its parent, not a sibling, and is left out.
fn sibling_edges(files: &[(String, String)]) -> Edges {
    let child_of = |rel: &str| -> Option<(String, String)> {
        let mut parts = rel.split('/');
        let parent = parts.next()?;
        let child = parts.next()?;
        let child = child.strip_suffix(".rs").unwrap_or(child);
        (child != "mod").then(|| (parent.to_string(), child.to_string()))
    };
    let children: BTreeSet<(String, String)> =
        files.iter().filter_map(|(rel, _)| child_of(rel)).collect();
    let mut edges = Edges::new();
    for (rel, text) in files {
        let (Some((parent, child)), Some(code)) = (child_of(rel), without_tests(rel, text)) else {
            continue;
        };
        // How many `super::` reach the parent: `store/fork.rs` → 1, `tools/lsp/check.rs` → 2.
        let depth = rel.split('/').filter(|part| *part != "mod.rs").count() - 1;
        for import in paths_from(code, &format!("crate::{parent}::"), depth) {
            if import != child && children.contains(&(parent.clone(), import.clone())) {
                let edge = (format!("{parent}/{child}"), format!("{parent}/{import}"));
                edges.entry(edge).or_default().insert(rel.clone());
            }
        }
    }
    edges
}

/// Both levels' edges of the crate.
fn import_edges(files: &[(String, String)]) -> Edges {
    let mut edges = module_edges(files);
    edges.extend(sibling_edges(files));
    edges
}

/// Every cycle the edges close once the allowed ones are left out, one paragraph each: its
/// modules, then each edge inside it with the files that import; and every allowed edge that
/// no longer exists.
fn cycles(edges: &Edges, allowed: &[(&str, &str, &str)]) -> Vec<String> {
    let is_allowed = |from: &str, to: &str| allowed.iter().any(|(f, t, _)| *f == from && *t == to);
    let kept: Edges = edges
        .iter()
        .filter(|((from, to), _)| !is_allowed(from, to))
        .map(|(edge, files)| (edge.clone(), files.clone()))
        .collect();
    let mut found: Vec<String> = strongly_connected(&kept)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let inside = kept
                .iter()
                .filter(|((from, to), _)| component.contains(from) && component.contains(to))
                .map(|((from, to), files)| {
                    let files: Vec<&str> = files.iter().map(String::as_str).collect();
                    format!("  {from} → {to} ({})", files.join(", "))
                });
            let names: Vec<&str> = component.iter().map(String::as_str).collect();
            let mut paragraph = vec![format!("cycle between {}:", names.join(", "))];
            paragraph.extend(inside);
            paragraph.join("\n")
        })
        .collect();
    for (from, to, _) in allowed {
        if !edges.contains_key(&(from.to_string(), to.to_string())) {
            found.push(format!(
                "allowed edge {from} → {to} no longer exists: remove it"
            ));
        }
    }
    found
}

/// Tarjan's strongly connected components of the graph the edges make, each sorted.
fn strongly_connected(edges: &Edges) -> Vec<BTreeSet<String>> {
    struct Walk<'e> {
        next: BTreeMap<&'e str, Vec<&'e str>>,
        index: BTreeMap<&'e str, usize>,
        low: BTreeMap<&'e str, usize>,
        stack: Vec<&'e str>,
        on_stack: BTreeSet<&'e str>,
        found: Vec<BTreeSet<String>>,
    }
    impl<'e> Walk<'e> {
        fn visit(&mut self, node: &'e str) {
            let index = self.index.len();
            self.index.insert(node, index);
            self.low.insert(node, index);
            self.stack.push(node);
            self.on_stack.insert(node);
            for to in self.next.get(node).cloned().unwrap_or_default() {
                if !self.index.contains_key(to) {
                    self.visit(to);
                    self.low.insert(node, self.low[node].min(self.low[to]));
                } else if self.on_stack.contains(to) {
                    self.low.insert(node, self.low[node].min(self.index[to]));
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = BTreeSet::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.insert(top.to_string());
                    if top == node {
                        break;
                    }
                }
                self.found.push(component);
            }
        }
    }
    let mut walk = Walk {
        next: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for (from, to) in edges.keys() {
        walk.next
            .entry(from.as_str())
            .or_default()
            .push(to.as_str());
    }
    let nodes: Vec<&str> = walk.next.keys().copied().collect();
    for node in nodes {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.found
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

#[test]
fn core_src_has_no_hidden_cycles() {
    let mut files = Vec::new();
    let root = main_src();
    sources(&root, &root, &mut files);
    let found = cycles(&import_edges(&files), ALLOWED_EDGES);
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
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

/// The cycle check itself: a planted cycle between top-level modules and one between siblings
/// are caught and named with their edges; an allowed edge breaks a cycle; a stale allowed
/// edge is reported.
#[test]
fn planted_cycles_are_caught() {
    let file = |rel: &str, text: &str| (rel.to_string(), text.to_string());
    let planted = [
        file("config.rs", "use crate::permissions::Mode;"),
        file("permissions/mod.rs", "use crate::tools::Access;"),
        file("tools/mod.rs", "use crate::config::ToolsConfig;"),
        file("tools/limits.rs", "use super::super::config::ToolsConfig;"),
        file("store/fork.rs", "use super::sessions::SessionRecord;"),
        file(
            "store/sessions.rs",
            "fn f() { super::fork::apply(); }\n#[cfg(test)]\nmod tests {\n    use crate::store::ops;\n}",
        ),
        file(
            "store/ops.rs",
            "use crate::store::{fork, sessions::dirs_json};",
        ),
        file("store/tests.rs", "use super::ops;"),
        file("session/mod.rs", "use crate::agent::Prompt;"),
        file("agent/mod.rs", "use crate::session::Session;"),
    ];
    let allowed = [
        ("session", "agent", "planted"),
        ("llm/http", "llm/sse", "stale"),
    ];
    let found = cycles(&import_edges(&planted), &allowed);
    let expected = [
        "cycle between config, permissions, tools:\n  \
         config → permissions (config.rs)\n  \
         permissions → tools (permissions/mod.rs)\n  \
         tools → config (tools/limits.rs, tools/mod.rs)",
        "cycle between store/fork, store/sessions:\n  \
         store/fork → store/sessions (store/fork.rs)\n  \
         store/sessions → store/fork (store/sessions.rs)",
        "allowed edge llm/http → llm/sse no longer exists: remove it",
    ];
    assert_eq!(found, expected);
}
