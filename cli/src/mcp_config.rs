//! `--mcp-config FILE`: MCP servers for every session, from a file in either of the two shapes
//! users have — ACP's list (`{"mcpServers": [{"name", "command", …}]}`, as in Hearth's config)
//! or the object keyed by server name that other agents read (`{"mcpServers": {"name":
//! {"command", "args", "env": {…}}}}`, `{"type": "http", "url", "headers": {…}}`). A stdio
//! entry's `"sandbox": true` (run it confined) is kept in either.

use std::path::Path;

use serde_json::{Map, Value, json};

/// The file's servers, as entries of the config's `mcpServers`.
pub fn read(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the MCP config {}: {e}", path.display()))?;
    let file: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    match file.get("mcpServers") {
        Some(Value::Array(entries)) => Ok(entries.clone()),
        Some(Value::Object(by_name)) => Ok(by_name.iter().map(|(n, s)| entry(n, s)).collect()),
        _ => Err(format!(
            "{}: expected an `mcpServers` list or object",
            path.display()
        )),
    }
}

/// One server of the keyed shape in ACP's shape; what cannot be read is passed on as it is,
/// to be reported in the session like any unusable server.
fn entry(name: &str, server: &Value) -> Value {
    let pairs = |key: &str| -> Value {
        let Some(Value::Object(map)) = server.get(key) else {
            return json!([]);
        };
        Value::Array(
            map.iter()
                .map(|(k, v)| json!({ "name": k, "value": v }))
                .collect(),
        )
    };
    let mut out = Map::new();
    out.insert("name".into(), json!(name));
    match server.get("type").and_then(Value::as_str) {
        Some("http") | Some("streamable-http") => {
            out.insert("type".into(), json!("http"));
            out.insert("url".into(), server.get("url").cloned().unwrap_or_default());
            out.insert("headers".into(), pairs("headers"));
        }
        Some(other) if other != "stdio" => {
            out.insert("type".into(), json!(other));
        }
        _ => {
            out.insert(
                "command".into(),
                server.get("command").cloned().unwrap_or_default(),
            );
            out.insert(
                "args".into(),
                server.get("args").cloned().unwrap_or(json!([])),
            );
            out.insert("env".into(), pairs("env"));
            if let Some(sandbox) = server.get("sandbox") {
                out.insert("sandbox".into(), sandbox.clone());
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn reads_both_shapes() {
        let list =
            file(r#"{"mcpServers": [{"name": "a", "command": "x", "args": [], "env": []}]}"#);
        assert_eq!(
            read(list.path()).unwrap(),
            vec![json!({"name": "a", "command": "x", "args": [], "env": []})]
        );
        let keyed = file(
            r#"{"mcpServers": {"fs": {"command": "srv", "args": ["-v"], "env": {"K": "1"}, "sandbox": true},
                               "web": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}}}"#,
        );
        assert_eq!(
            read(keyed.path()).unwrap(),
            vec![
                json!({"name": "fs", "command": "srv", "args": ["-v"], "env": [{"name": "K", "value": "1"}], "sandbox": true}),
                json!({"name": "web", "type": "http", "url": "http://127.0.0.1:1/mcp", "headers": [{"name": "A", "value": "b"}]}),
            ]
        );
        assert!(read(file("[]").path()).unwrap_err().contains("mcpServers"));
        // A value that is not a string is passed on as it is, for the session to report.
        let typed = file(r#"{"mcpServers": {"n": {"command": "srv", "env": {"PORT": 8080}}}}"#);
        assert_eq!(
            read(typed.path()).unwrap()[0]["env"],
            json!([{"name": "PORT", "value": 8080}])
        );
    }
}
