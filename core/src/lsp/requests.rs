//! What a language server asks of Hearth, answered on the reader task (so a server waiting
//! for its configuration never stalls a call): the configuration, the workspace folders, and
//! an empty success for registrations, progress and refreshes; anything else is "method not
//! found".
//!
//! The configuration is null for every item, except that TypeScript's automatic type
//! acquisition is turned off, so the server never runs `npm install`.

use std::path::Path;

use serde_json::{Value, json};

use super::exchange::METHOD_NOT_FOUND;

/// The answer frame to the server's request `id` for `method`; `folders` is the workspace.
pub fn answer(id: &Value, method: &str, params: Option<&Value>, folders: &Value) -> Value {
    let result = match method {
        "workspace/configuration" => Ok(configuration(params)),
        "workspace/workspaceFolders" => Ok(folders.clone()),
        "client/registerCapability"
        | "client/unregisterCapability"
        | "window/workDoneProgress/create"
        | "window/showMessageRequest" => Ok(Value::Null),
        refresh if refresh.ends_with("/refresh") => Ok(Value::Null),
        _ => Err(
            json!({"code": METHOD_NOT_FOUND, "message": format!("{method} is not supported by Hearth")}),
        ),
    };
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    }
}

/// The answer to `workspace/configuration`: nothing for every section, but TypeScript's, whose
/// automatic type acquisition would otherwise run `npm install` into the user's cache.
fn configuration(params: Option<&Value>) -> Value {
    let items = params
        .and_then(|p| p["items"].as_array())
        .map(Vec::as_slice)
        .unwrap_or_default();
    items
        .iter()
        .map(|item| match item["section"].as_str() {
            Some("js/ts" | "typescript" | "javascript") => {
                json!({"tsserver": {"automaticTypeAcquisition": {"enabled": false}}})
            }
            Some("rust-analyzer") => super::spec::rust_analyzer_settings(),
            _ => Value::Null,
        })
        .collect()
}

/// The workspace folders of a server on `root`: `root` alone.
pub fn folders(root: &Path) -> Value {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    json!([{"uri": super::uri(root), "name": name}])
}
