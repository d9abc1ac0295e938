//! The language-server tools end to end through the engine, with the real servers: pyright
//! and TypeScript 7's `tsc --lsp`, installed by `bash tests/lsp/setup.sh` (pinned). The fake
//! server's cases (hangs, pushes, a server crashing on every start) are the unit tests of
//! `core/src/tools/lsp/tests.rs`; the servers' processes (sharing, a crash, no orphans) are
//! watched in `lsp_processes.rs`.

mod common;

use std::path::{Path, PathBuf};

use common::{Setup, call, final_status, lsp_config, start, text, tool_results};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

fn write(root: &Path, files: &[(&str, &str)]) {
    for (name, content) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// A workspace directory of its own (not the data dir: its processes are looked for by cwd).
fn workspace(setup: &Setup, files: &[(&str, &str)]) -> PathBuf {
    let root = setup.dir.path().join("project");
    write(&root, files);
    root
}

fn session(client: &mut AcpClient<InProcess>, cwd: &Path) -> String {
    client.new_session(&cwd.to_string_lossy())
}

const PY_A: &str = "def greet(name: str) -> str:\n    return \"hi \" + name\n";
const PY_B: &str = "from a import greet\n\nn: int = greet(\"x\")\nprint(greet(\"y\"))\n";

#[test]
fn pyright_reports_errors_finds_definitions_and_references_and_sees_an_edit_fix_them() {
    let setup = Setup::new(json!({"responses": [
        call("d", "lsp_diagnostics", json!({"path": "b.py"})),
        call("def", "lsp_definition", json!({"path": "b.py", "line": 3, "column": 10})),
        call("refs", "lsp_references", json!({"path": "a.py", "line": 1, "column": 5})),
        call("fix", "edit", json!({"path": "b.py", "edits": [{"old_text": "n: int", "new_text": "n: str"}]})),
        call("break", "edit", json!({"path": "a.py", "edits": [{"old_text": "-> str", "new_text": "-> int"}]})),
        text(&["done"]),
    ]}));
    let root = workspace(&setup, &[("a.py", PY_A), ("b.py", PY_B)]);
    let mut client = start(
        &setup,
        json!({"lsp": lsp_config()["lsp"], "permissionMode": "bypass"}),
    );
    let session = session(&mut client, &root);
    assert_eq!(
        client.prompt(&session, "check b.py")["result"]["stopReason"],
        "end_turn"
    );
    let results = tool_results(&setup, 5);
    let [diagnostics, definition, references, fix, broke] = &results[..] else {
        panic!("{results:?}")
    };
    assert!(
        diagnostics.starts_with("b.py: 1 error, 0 warnings\n"),
        "{diagnostics}"
    );
    assert!(
        diagnostics.contains("3:10 error [Pyright reportAssignmentType]: Type \"str\" is not assignable to declared type \"int\""),
        "{diagnostics}"
    );
    assert!(
        definition.contains("a.py:1:5\n>    1\tdef greet(name: str) -> str:"),
        "{definition}"
    );
    assert!(references.contains("in 2 files"), "{references}");
    assert!(
        references.contains("\na.py\n  1:5: def greet(name: str) -> str:\n"),
        "{references}"
    );
    assert!(references.contains("\nb.py\n  1:15: from a import greet\n  3:10: n: int = greet(\"x\")\n  4:7: print(greet(\"y\"))\n"), "{references}");
    assert!(
        fix.contains("The python language server reports no errors in b.py."),
        "{fix}"
    );
    assert!(
        broke.contains("1 new error this change introduced in a.py:\na.py:2:12 error"),
        "{broke}"
    );
    assert_eq!(final_status(&client, &session), ["completed"; 5]);
    let started = client
        .updates(&session)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap();
    assert_eq!(started["kind"], "read");
    assert_eq!(started["title"], "Diagnostics of b.py");
}

const TS_A: &str = "export function greet(name: string): string {\n  return \"hi \" + name;\n}\n";
const TS_B: &str = "import { greet } from \"./a\";\n\nconst n: number = greet(\"x\");\nconsole.log(n, greet(\"y\"));\n";

#[test]
fn typescript_7_reports_errors_finds_definitions_and_references_and_sees_an_edit_fix_them() {
    let setup = Setup::new(json!({"responses": [
        call("d", "lsp_diagnostics", json!({"path": "src/b.ts"})),
        call("def", "lsp_definition", json!({"path": "src/b.ts", "line": 3, "column": 19})),
        call("refs", "lsp_references", json!({"path": "src/a.ts", "line": 1, "column": 17})),
        call("fix", "edit", json!({"path": "src/b.ts", "edits": [{"old_text": "n: number", "new_text": "n: string"}]})),
        text(&["done"]),
    ]}));
    let root = workspace(&setup, &[("src/a.ts", TS_A), ("src/b.ts", TS_B)]);
    let mut client = start(
        &setup,
        json!({"lsp": lsp_config()["lsp"], "permissionMode": "bypass"}),
    );
    let session = session(&mut client, &root);
    assert_eq!(
        client.prompt(&session, "check b.ts")["result"]["stopReason"],
        "end_turn"
    );
    let results = tool_results(&setup, 4);
    let [diagnostics, definition, references, fix] = &results[..] else {
        panic!("{results:?}")
    };
    assert!(
        diagnostics.starts_with("src/b.ts: 1 error, 0 warnings\n"),
        "{diagnostics}"
    );
    assert!(
        diagnostics
            .contains("3:7 error [ts 2322]: Type 'string' is not assignable to type 'number'."),
        "{diagnostics}"
    );
    assert!(
        definition.contains("src/a.ts:1:17\n>    1\texport function greet"),
        "{definition}"
    );
    assert!(references.contains("in 2 files"), "{references}");
    assert!(
        references.contains("\nsrc/a.ts\n  1:17: export function greet"),
        "{references}"
    );
    assert!(
        references.contains("\nsrc/b.ts\n  1:10: import { greet } from \"./a\";\n  3:19: const n"),
        "{references}"
    );
    assert!(
        fix.contains("The typescript language server reports no errors in src/b.ts."),
        "{fix}"
    );
    assert_eq!(final_status(&client, &session), ["completed"; 4]);
}

const RS_CARGO: &str = "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const RS_LIB: &str = "pub fn greet(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n";
const RS_MAIN: &str =
    "fn main() {\n    let n = tiny::greet(\"x\", 1);\n    println!(\"{n}\");\n}\n";

/// rust-analyzer, the default server for `.rs` (`rustup component add rust-analyzer`, done by
/// tests/lsp/setup.sh): a dependency-free crate, so it indexes only the sysroot. It answers
/// "0 errors" until it has loaded the workspace: the client waits for its
/// `experimental/serverStatus` `quiescent` (`core/src/lsp/readiness.rs`).
#[test]
fn rust_analyzer_reports_a_type_error_and_finds_the_definition() {
    let setup = Setup::new(json!({"responses": [
        call("d", "lsp_diagnostics", json!({"path": "src/main.rs"})),
        call("def", "lsp_definition", json!({"path": "src/main.rs", "line": 2, "column": 19})),
        text(&["done"]),
    ]}));
    let root = workspace(
        &setup,
        &[
            ("Cargo.toml", RS_CARGO),
            ("src/lib.rs", RS_LIB),
            ("src/main.rs", RS_MAIN),
        ],
    );
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let session = session(&mut client, &root);
    assert_eq!(
        client.prompt(&session, "check main.rs")["result"]["stopReason"],
        "end_turn"
    );
    let results = tool_results(&setup, 2);
    let [diagnostics, definition] = &results[..] else {
        panic!("{results:?}")
    };
    assert!(
        diagnostics.contains("src/main.rs: 1 error"),
        "{diagnostics}"
    );
    assert!(
        diagnostics.contains("expected 1 argument, found 2"),
        "{diagnostics}"
    );
    assert!(
        definition.contains("src/lib.rs:1:8\n>    1\tpub fn greet"),
        "{definition}"
    );
}

#[test]
fn the_server_analyses_the_editors_unsaved_buffer_not_the_disk() {
    let setup = Setup::new(json!({"responses": [
        call("d", "lsp_diagnostics", json!({"path": "b.ts"})),
        text(&["done"]),
    ]}));
    let clean = "const n: number = 1;\nconsole.log(n);\n";
    let root = workspace(&setup, &[("b.ts", clean)]);
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["lsp"] = lsp_config()["lsp"].clone();
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true}}}),
    );
    let unsaved = "const n: number = \"not saved yet\";\nconsole.log(n);\n";
    client.respond_with(move |method, _| match method {
        "fs/read_text_file" => Some(json!({"content": unsaved})),
        _ => None,
    });
    let session = session(&mut client, &root);
    client.prompt(&session, "check b.ts");
    let diagnostics = &tool_results(&setup, 1)[0];
    assert!(diagnostics.contains("b.ts: 1 error"), "{diagnostics}");
    assert!(
        diagnostics.contains("1:7 error [ts 2322]"),
        "the buffer's error: {diagnostics}"
    );
    assert!(!client.agent_requests("fs/read_text_file").is_empty());
    assert_eq!(
        std::fs::read_to_string(root.join("b.ts")).unwrap(),
        clean,
        "the disk is untouched"
    );
}

#[test]
fn a_missing_server_is_a_clear_result_and_the_tools_stay_offered() {
    let setup = Setup::new(json!({"responses": [
        call("d", "lsp_diagnostics", json!({"path": "a.py"})),
        text(&["I see"]),
    ]}));
    let root = workspace(&setup, &[("a.py", PY_A)]);
    let missing = json!({"servers": {"python": {"extensions": ["py"], "command": "/nonexistent/bin/pyright-langserver", "args": ["--stdio"]}}});
    let mut client = start(&setup, json!({"lsp": missing}));
    let session = session(&mut client, &root);
    assert_eq!(
        client.prompt(&session, "check")["result"]["stopReason"],
        "end_turn"
    );
    let offered: Vec<String> = setup.mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    for tool in ["lsp_diagnostics", "lsp_definition", "lsp_references"] {
        assert!(offered.contains(&tool.to_string()), "{tool} in {offered:?}");
    }
    let result = &tool_results(&setup, 1)[0];
    assert!(
        result.contains("unavailable: the python language server"),
        "{result}"
    );
    assert!(result.contains("command not found: /nonexistent/bin/pyright-langserver — install it with `npm i -g pyright`"), "{result}");
    assert_eq!(final_status(&client, &session), ["failed"]);
}
