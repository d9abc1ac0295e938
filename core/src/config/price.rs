//! A model's prices (`models[].price`), for the `cost` of `usage_update` and `/context`:
//! per million tokens, in `currency` (default USD). Cached prompt tokens cost what the
//! provider says (`cacheRead`, `cacheWrite`), else the input price.

use serde::Deserialize;

use crate::llm::Usage;

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

const PER_TOKENS: f64 = 1_000_000.0;

impl Price {
    /// What one request's `usage` cost.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let tokens = |n: u64, price: f64| n as f64 * price / PER_TOKENS;
        tokens(usage.input, self.input)
            + tokens(usage.output, self.output)
            + tokens(usage.cache_read, self.cache_read.unwrap_or(self.input))
            + tokens(usage.cache_write, self.cache_write.unwrap_or(self.input))
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_costs_its_tokens_at_their_prices() {
        let price = Price {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: None,
            currency: None,
        };
        let usage = Usage {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_write: 10_000,
        };
        let cost = price.cost(&usage);
        assert!((cost - (3.0 + 1.5 + 0.6 + 0.03)).abs() < 1e-9, "{cost}");
        assert_eq!(price.currency(), "USD");
    }
}
