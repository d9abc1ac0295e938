//! `hearth run`'s answer to an `elicitation/create` form (a question of the model's
//! `ask_user`, or of an MCP server): asked on the terminal, one property at a time. Without a
//! terminal nobody can answer, so the request fails with that reason — the engine then tells
//! the model it could not ask, instead of taking a default.

use std::io::{self, BufRead, IsTerminal, Write};

use serde_json::{Map, Value, json};

/// The result of the request, or the error's message.
pub fn answer(params: &Value) -> Result<Value, String> {
    if !io::stdin().is_terminal() {
        eprintln!(
            "\n  ✗ could not ask: {}",
            params["message"].as_str().unwrap_or("a question")
        );
        return Err("there is no terminal to ask the user on".into());
    }
    eprintln!("\n  ? {}", params["message"].as_str().unwrap_or(""));
    let schema = &params["requestedSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let title = property["title"].as_str().unwrap_or(name);
        match ask(title, property) {
            Some(value) => {
                content.insert(name.clone(), value);
            }
            // An empty answer to a required field declines the whole form.
            None if required.contains(&name.as_str()) => return Ok(json!({"action": "decline"})),
            None => {}
        }
    }
    Ok(json!({"action": "accept", "content": content}))
}

/// One property's answer; `None` for an empty line.
fn ask(title: &str, property: &Value) -> Option<Value> {
    let choices = choices(property);
    for (i, (_, label)) in choices.iter().enumerate() {
        eprintln!("    {}. {label}", i + 1);
    }
    let multiple = property["type"] == "array";
    let hint = match property["type"].as_str() {
        _ if multiple => " (numbers, comma-separated)",
        _ if !choices.is_empty() => " (number)",
        Some("boolean") => " [y/n]",
        _ => "",
    };
    eprint!("  {title}{hint}: ");
    let _ = io::stderr().flush();
    let mut line = String::new();
    let _ = io::stdin().lock().read_line(&mut line);
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let pick = |n: &str| {
        let index: usize = n.trim().parse().ok()?;
        choices.get(index.checked_sub(1)?).map(|(v, _)| v.clone())
    };
    match property["type"].as_str() {
        _ if multiple => Some(Value::Array(line.split(',').filter_map(pick).collect())),
        _ if !choices.is_empty() => pick(line),
        Some("boolean") => Some(json!(matches!(line, "y" | "Y" | "yes"))),
        Some("integer") => line.parse::<i64>().ok().map(Value::from),
        Some("number") => line.parse::<f64>().ok().map(Value::from),
        _ => Some(json!(line)),
    }
}

/// A choice property's `(value, label)`s: `enum`, or titled consts (`oneOf`, or the items'
/// `anyOf`/`enum` of a multiple choice).
fn choices(property: &Value) -> Vec<(Value, String)> {
    let schema = if property["type"] == "array" {
        &property["items"]
    } else {
        property
    };
    if let Some(values) = schema["enum"].as_array() {
        return values
            .iter()
            .map(|v| (v.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
    }
    schema["oneOf"]
        .as_array()
        .or(schema["anyOf"].as_array())
        .into_iter()
        .flatten()
        .map(|c| {
            let label = c["title"]
                .as_str()
                .or(c["const"].as_str())
                .unwrap_or_default();
            (c["const"].clone(), label.to_string())
        })
        .collect()
}
