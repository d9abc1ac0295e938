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

pub fn from_str<T: DeserializeOwned>(json: &str) -> Result<T, FieldError> {
    let mut de = serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(&mut de).map_err(located)
}

fn located(e: serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    let path = e.path().to_string();
    FieldError {
        path: (path != ".").then_some(path),
        message: e.into_inner().to_string(),
    }
}
