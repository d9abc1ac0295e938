//! A model's prices (`models[].price`), for the `cost` of `usage_update` and `/context`:
//! per million tokens, in `currency` (default USD). Cached prompt tokens cost what the
//! provider says (`cacheRead`, `cacheWrite`), else the input price. What a request cost is
//! the turn's to work out (`agent/stream.rs`): the config knows no model's usage.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
    /// ISO 4217 (or a unit such as "credits"). Default "USD".
    pub currency: Option<String>,
}

impl Price {
    pub fn currency(&self) -> &str {
        self.currency.as_deref().unwrap_or("USD")
    }

    /// Prices are figures of money: finite and not negative.
    pub fn is_valid(&self) -> bool {
        [
            Some(self.input),
            Some(self.output),
            self.cache_read,
            self.cache_write,
        ]
        .into_iter()
        .flatten()
        .all(|p| p.is_finite() && p >= 0.0)
    }
}
