//! The JSON Schema of a tool's arguments, generated from its input type, in the plain form
//! both providers take as function parameters (OpenAI `parameters`, Anthropic
//! `input_schema`): a closed object, everything inlined, no `$schema`, `title`, `$defs`, no
//! `format` (schemars' `uint`s are not JSON Schema and some providers refuse them), no
//! `default` (the descriptions say it) and an optional field as its plain type, not
//! `[T, "null"]`. Keys come in one fixed order so a tool's schema is the same bytes in
//! every request, which keeps the providers' prompt caches warm.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Keys dropped wherever they appear in a schema.
const DROPPED: [&str; 4] = ["$schema", "title", "format", "default"];

/// The order of a schema's keys: its type, what constrains it, its description, then what
/// it holds. Unknown keys keep their place after these.
const ORDER: [&str; 11] = [
    "type",
    "enum",
    "minimum",
    "maximum",
    "minItems",
    "description",
    "items",
    "properties",
    "required",
    "additionalProperties",
    "oneOf",
];

/// `T`'s schema, as a tool's parameters.
pub fn parameters<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    tidy(schema.to_value())
}

/// A schema without the keys providers do not want, its keys in [`ORDER`].
fn tidy(schema: Value) -> Value {
    let Value::Object(members) = schema else {
        return schema;
    };
    let mut members: Vec<(String, Value)> = members
        .into_iter()
        .filter(|(key, _)| !DROPPED.contains(&key.as_str()))
        .map(|(key, value)| {
            let value = match key.as_str() {
                "type" => not_null(value),
                "items" => tidy(value),
                "properties" => tidy_each(value),
                _ => value,
            };
            (key, value)
        })
        .collect();
    let rank = |key: &str| ORDER.iter().position(|k| *k == key).unwrap_or(ORDER.len());
    members.sort_by_key(|(key, _)| rank(key));
    Value::Object(members.into_iter().collect())
}

/// An optional field's `["string", "null"]` as `"string"`: leaving it out already says the
/// field is optional.
fn not_null(types: Value) -> Value {
    let Value::Array(types) = types else {
        return types;
    };
    let mut kept: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
    match kept.len() {
        1 => kept.remove(0),
        _ => Value::Array(kept),
    }
}

/// Each property's schema, tidied; the properties' own names and order stay.
fn tidy_each(properties: Value) -> Value {
    let Value::Object(properties) = properties else {
        return properties;
    };
    let tidied: Map<String, Value> = properties
        .into_iter()
        .map(|(name, schema)| (name, tidy(schema)))
        .collect();
    Value::Object(tidied)
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::tools::{Registry, ToolDeps};

    /// Each built-in tool's name, description and parameters, byte for byte, as the models
    /// have always been told them (the hand-written schemas they replaced); `web_search` with
    /// a backend configured, `task` as a session without agent files offers it.
    #[test]
    fn builtin_specs_match_the_golden_file() {
        let config = Config::from_json(
            r#"{"webSearch": {"provider": "searxng", "url": "https://search.example"}}"#,
        )
        .unwrap();
        let specs: Vec<serde_json::Value> = Registry::for_session(
            &ToolDeps::create(&config, crate::io::testing::launcher(), Default::default()),
            Some(crate::tools::builtin_agents()),
        )
        .specs()
        .into_iter()
        .map(|spec| {
            serde_json::json!({
                "name": spec.name,
                "description": spec.description,
                "parameters": *spec.parameters,
            })
        })
        .collect();
        let written = serde_json::to_string_pretty(&specs).unwrap();
        assert_eq!(written, include_str!("specs.golden.json").trim_end());
    }
}
