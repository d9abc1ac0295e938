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
    // Tracking the path costs as much again as the parse, so it is paid only to explain an
    // error: valid input, the common case, is read once without it.
    serde_json::from_str(json).or_else(|_| {
        let mut de = serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize(&mut de).map_err(located)
    })
}

impl FieldError {
    /// Removes the ` at line L column C` that serde_json appends when it read from text.
    pub fn drop_position(&mut self) {
        if let Some((message, position)) = self.message.rsplit_once(" at line ")
            && position.contains(" column ")
            && position
                .bytes()
                .all(|b| b.is_ascii_digit() || b" column".contains(&b))
        {
            self.message.truncate(message.len());
        }
    }
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
    fn drop_position_keeps_the_message() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct T {
            a: u32,
        }
        let mut e = from_str::<T>(r#"{"a": "x"}"#).unwrap_err();
        assert!(e.message.contains(" at line 1 column "), "{}", e.message);
        e.drop_position();
        assert_eq!(
            e.to_string(),
            "`a`: invalid type: string \"x\", expected u32"
        );
    }
}
