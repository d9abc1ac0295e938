//! The tools as the providers receive them: each built-in tool's schema is the golden one
//! (`core/src/tools/specs.golden.json`), in the plain form both OpenAI `parameters` and
//! Anthropic `input_schema` take, and the same bytes in every request of a session.

mod common;

use common::{Setup, call, start, text};
use serde_json::{Value, json};

/// Keys some provider refuses, or that need definitions the request does not carry.
const REFUSED: [&str; 6] = ["$schema", "title", "$ref", "$defs", "definitions", "format"];

/// The tools of a request, as `(name, description, schema)`.
fn tools(body: &Value, anthropic: bool) -> Vec<(String, String, Value)> {
    let listed = body["tools"].as_array().cloned().unwrap_or_default();
    listed
        .into_iter()
        .map(|tool| {
            let (spec, schema) = match anthropic {
                true => (tool.clone(), "input_schema"),
                false => (tool["function"].clone(), "parameters"),
            };
            let field = |key: &str| spec[key].as_str().unwrap().to_string();
            (field("name"), field("description"), spec[schema].clone())
        })
        .collect()
}

/// Every schema inside `schema`, itself included, with where it is.
fn schemas<'a>(schema: &'a Value, at: String, out: &mut Vec<(String, &'a Value)>) {
    out.push((at.clone(), schema));
    if let Some(items) = schema.get("items") {
        schemas(items, format!("{at}.items"), out);
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        schemas(property, format!("{at}.{name}"), out);
    }
}

fn assert_plain(name: &str, schema: &Value) {
    assert_eq!(schema["type"], "object", "{name}");
    assert_eq!(schema["additionalProperties"], false, "{name}");
    let mut all = Vec::new();
    schemas(schema, name.to_string(), &mut all);
    for (at, schema) in all {
        for key in REFUSED {
            assert!(schema.get(key).is_none(), "{at} has `{key}`: {schema}");
        }
        assert!(schema["type"].is_string(), "{at}: {schema}");
        if schema["type"] == "object" {
            assert_eq!(schema["additionalProperties"], false, "{at}");
        }
    }
}

/// The golden description of tool `name` as this OS gives it. The golden is the Unix text;
/// `run_command`'s first sentence names the shell, which on Windows is PowerShell or cmd.exe
/// by design (chosen from PATH), so there it may name one of those instead of `sh -c`.
fn golden_description(name: &str, golden: &str, actual: &str) -> String {
    if cfg!(unix) || name != "run_command" {
        return golden.to_string();
    }
    let shell = actual
        .strip_prefix("Run a shell command (`")
        .and_then(|rest| rest.split_once("`)"))
        .map(|(shell, _)| shell)
        .unwrap_or_else(|| panic!("run_command names no shell: {actual}"));
    assert!(
        ["pwsh.exe ", "powershell.exe ", "cmd.exe "]
            .iter()
            .any(|program| shell.starts_with(program)),
        "not a Windows shell: {shell}"
    );
    golden.replacen("`sh -c`", &format!("`{shell}`"), 1)
}

#[test]
fn the_builtin_tools_reach_both_providers_plain_golden_and_byte_stable() {
    let golden: Vec<Value> =
        serde_json::from_str(include_str!("../src/tools/specs.golden.json")).unwrap();
    for anthropic in [false, true] {
        let setup = Setup::new(json!({ "responses": [
            call("call_1", "list", json!({})),
            text(&["Listed."]),
        ]}));
        let extra = match anthropic {
            true => json!({
                "model": "claude-test",
                "providers": {"anthropic": {"baseUrl": setup.mock.base_url(),
                    "apiKey": "anthropic-test-key", "maxRetries": 0}},
            }),
            false => json!({}),
        };
        let mut client = start(&setup, extra);
        let session = client.new_session(&setup.cwd());
        let answer = client.prompt(&session, "list the files");
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 2);
        let first = tools(&requests[0].body, anthropic);
        for (name, description, schema) in &first {
            assert_plain(name, schema);
            if let Some(spec) = golden.iter().find(|spec| spec["name"] == *name) {
                let expected = spec["description"].as_str().unwrap();
                assert_eq!(
                    golden_description(name, expected, description),
                    *description,
                    "{name}"
                );
                assert_eq!(spec["parameters"], *schema, "{name}");
            }
        }
        let names: Vec<&str> = first.iter().map(|(name, _, _)| name.as_str()).collect();
        // `skill` is offered only to a session that has skills; this one has none.
        let golden_names: Vec<&str> = golden
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .filter(|name| *name != "skill")
            .collect();
        assert_eq!(names, golden_names, "every built-in tool, in order");
        // The second step's tools are the first's, to the byte.
        let written = |n: usize| serde_json::to_string(&requests[n].body["tools"]).unwrap();
        assert_eq!(written(0), written(1));
        for request in &requests {
            assert!(request.raw.contains(&written(0)), "{}", request.raw);
        }
    }
}
