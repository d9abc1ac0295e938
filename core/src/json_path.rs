//! Typed values from JSON with errors that name the offending field — for the config, for
//! request params and for tool arguments alike.

use serde::de::DeserializeOwned;

/// A deserialization error and where it happened (`None` at the top level).
pub struct FieldError {
    pub path: Option<String>,
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(path) => write!(f, "`{path}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

pub fn from_value<T: DeserializeOwned>(
    value: impl serde::Deserializer<'static, Error = serde_json::Error>,
) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(value).map_err(located)
}

/// `json` as a `T`, all of it: anything after the value (a second object, stray text) is an
/// error, never dropped.
pub fn from_str<T: DeserializeOwned>(json: &str) -> Result<T, FieldError> {
    let mut de = serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(&mut de).map_err(located)?;
    de.end().map_err(|e| FieldError {
        path: None,
        message: e.to_string(),
    })?;
    Ok(value)
}

fn located(e: serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    let path = e.path().to_string();
    FieldError {
        path: (path != ".").then_some(path),
        message: e.into_inner().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_after_the_value_is_dropped() {
        let one: Result<serde_json::Value, _> = from_str(" {\"a\": 1} \n");
        assert!(one.is_ok());
        for json in ["{\"a\": 1} {\"b\": 2}", "{\"a\": 1} x"] {
            let error = from_str::<serde_json::Value>(json).err().unwrap();
            assert!(
                error.to_string().starts_with("trailing characters"),
                "{error}"
            );
        }
    }
}
