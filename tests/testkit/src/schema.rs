//! Validation of agent-emitted frames against the official ACP schema, vendored in
//! `tests/acp/schema.json` (its source and licence: `tests/acp/README.md`). The unstable
//! methods Hearth serves are checked against `tests/acp/schema.unstable.json`, which has them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use jsonschema::Validator;
use serde_json::{Value, json};

/// The unstable methods Hearth implements: their params and results are checked against the
/// unstable schema (the stable one has no types for them). Every other frame, the
/// notifications these methods cause included, is held to the stable schema.
const UNSTABLE_METHODS: [&str; 2] = ["session/fork", "session/set_title"];

/// The unstable `session/update` kinds Hearth sends (to a client that advertised them):
/// checked against the unstable schema, which has them.
const UNSTABLE_UPDATES: [&str; 2] = ["subagent_update", "session_message"];

pub struct Schema {
    stable: Book,
    unstable: Book,
}

/// One schema file: its root, its method table and its compiled definitions.
struct Book {
    root: Value,
    /// `(method, kind)` → `$defs` name, read from the schema's own `x-method` annotations.
    names: HashMap<(String, &'static str), String>,
    validators: Mutex<HashMap<String, std::sync::Arc<Validator>>>,
}

impl Schema {
    /// The stable schema from `HEARTH_ACP_SCHEMA` (default `tests/acp/schema.json`), the
    /// unstable one from `HEARTH_ACP_UNSTABLE_SCHEMA` (default `tests/acp/schema.unstable.json`).
    pub fn load() -> Schema {
        let path = |var: &str, default: &str| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .unwrap_or_else(|| crate::repo_root().join(default))
        };
        Schema {
            stable: Book::load(&path("HEARTH_ACP_SCHEMA", "tests/acp/schema.json")),
            unstable: Book::load(&path(
                "HEARTH_ACP_UNSTABLE_SCHEMA",
                "tests/acp/schema.unstable.json",
            )),
        }
    }

    /// Checks one frame the agent sent. `request_method` names the method of the client
    /// request a response answers.
    pub fn check(&self, frame: &Value, request_method: Option<&str>) -> Result<(), String> {
        if frame.get("jsonrpc") != Some(&json!("2.0")) {
            return Err("missing jsonrpc 2.0".into());
        }
        if let Some(error) = frame.get("error") {
            return self.stable.check_def("Error", error);
        }
        if let Some(result) = frame.get("result") {
            let method = request_method.ok_or("a response to an unknown request")?;
            return self
                .book(method, &Value::Null)
                .check_method(method, "result", result);
        }
        let method = frame["method"]
            .as_str()
            .ok_or("neither response nor message")?;
        match frame.get("params") {
            Some(params) => self
                .book(method, params)
                .check_method(method, "params", params),
            None => Ok(()),
        }
    }

    fn book(&self, method: &str, params: &Value) -> &Book {
        let unstable_update = method == "session/update"
            && UNSTABLE_UPDATES.contains(&params["update"]["sessionUpdate"].as_str().unwrap_or(""));
        if UNSTABLE_METHODS.contains(&method) || unstable_update {
            &self.unstable
        } else {
            &self.stable
        }
    }
}

impl Book {
    fn load(path: &Path) -> Book {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read the ACP schema {}: {e}", path.display()));
        let root: Value = serde_json::from_str(&text).expect("the ACP schema is JSON");
        let mut names = HashMap::new();
        for (name, def) in root["$defs"].as_object().expect("$defs") {
            if let Some(method) = def.get("x-method").and_then(Value::as_str) {
                let kind = if name.ends_with("Response") {
                    "result"
                } else {
                    "params"
                };
                names.insert((method.to_string(), kind), name.clone());
            }
        }
        Book {
            root,
            names,
            validators: Mutex::new(HashMap::new()),
        }
    }

    fn check_method(&self, method: &str, kind: &'static str, value: &Value) -> Result<(), String> {
        // An extension method (`_…`) has no type in the ACP schema: its own tests check it.
        if method.starts_with('_') && !self.names.contains_key(&(method.to_string(), kind)) {
            return Ok(());
        }
        let name = self
            .names
            .get(&(method.to_string(), kind))
            .ok_or_else(|| format!("the schema has no {kind} type for `{method}`"))?;
        self.check_def(name, value)
    }

    fn check_def(&self, name: &str, value: &Value) -> Result<(), String> {
        let validator = self.validator(name);
        let errors: Vec<String> = validator
            .iter_errors(value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!("{name}: {}", errors.join("; ")))
        }
    }

    fn validator(&self, name: &str) -> std::sync::Arc<Validator> {
        let mut cache = self.validators.lock().unwrap();
        cache
            .entry(name.to_string())
            .or_insert_with(|| {
                let schema = json!({
                    "$schema": self.root["$schema"],
                    "$ref": format!("#/$defs/{name}"),
                    "$defs": self.root["$defs"],
                });
                std::sync::Arc::new(jsonschema::validator_for(&schema).expect("a valid schema"))
            })
            .clone()
    }
}
