//! Tool inputs: the model's JSON arguments into typed structs, with errors that say which
//! field was wrong so the model can fix its call.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ToolError;

pub fn parse<T: DeserializeOwned>(input: &Value) -> Result<T, ToolError> {
    crate::json_path::from_value(input.clone())
        .map_err(|e| ToolError(format!("invalid arguments: {e}")))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Input {
        path: String,
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Item {
        text: String,
    }

    #[test]
    fn errors_name_the_field() {
        let error = parse::<Input>(&json!({ "path": "a", "items": [{ "text": 1 }] })).unwrap_err();
        assert!(
            error
                .0
                .starts_with("invalid arguments: `items[0].text`: invalid type"),
            "{error}"
        );
        let error = parse::<Input>(&json!({ "items": [] })).unwrap_err();
        assert!(error.0.contains("missing field `path`"), "{error}");
    }
}
