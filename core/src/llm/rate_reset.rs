//! When a provider's limit resets, read from the headers of its refusal, so the user is told
//! a time rather than left to guess one (clients invent them otherwise):
//!
//! - `retry-after` / `retry-after-ms` (every provider): the server's own answer, which wins;
//! - `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-reset`: RFC 3339 times;
//! - `x-ratelimit-reset-{requests,tokens}` (OpenAI, Groq): durations such as `6m0s`, `1.5s`,
//!   `20ms`;
//! - `x-ratelimit-reset` (OpenRouter and others): a Unix time in milliseconds or seconds, or
//!   a number of seconds from now.
//!
//! Without `retry-after` the latest of the others is taken: which limit ran out is not said,
//! and the latest is the one after which every limit has reset.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

use super::retry::retry_after;

const RFC3339_HEADERS: &[&str] = &[
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-reset",
];
const DURATION_HEADERS: &[&str] = &["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"];

/// When the limit the answer in `headers` reports resets, if it says.
pub fn reset_at(headers: &HeaderMap, now: SystemTime) -> Option<SystemTime> {
    if let Some(wait) = retry_after(headers, now) {
        return Some(now + wait);
    }
    let header = |name: &&str| headers.get(*name)?.to_str().ok().map(str::trim);
    let rfc3339 = RFC3339_HEADERS
        .iter()
        .filter_map(header)
        .filter_map(|v| humantime::parse_rfc3339_weak(v).ok());
    let durations = DURATION_HEADERS
        .iter()
        .filter_map(header)
        .filter_map(go_duration)
        .map(|d| now + d);
    let epoch = header(&"x-ratelimit-reset").and_then(|v| number_reset(v, now));
    rfc3339.chain(durations).chain(epoch).max()
}

/// A Go-style duration: `1h2m3.5s`, `6m0s`, `20ms`.
fn go_duration(text: &str) -> Option<Duration> {
    if text.is_empty() {
        return None;
    }
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += value * seconds;
        rest = &rest[unit..];
    }
    Duration::try_from_secs_f64(total).ok()
}

/// A bare number: Unix milliseconds, Unix seconds, or seconds from now, told apart by size.
fn number_reset(text: &str, now: SystemTime) -> Option<SystemTime> {
    let value: f64 = text.parse().ok()?;
    let since_epoch = |secs: f64| Some(UNIX_EPOCH + Duration::try_from_secs_f64(secs).ok()?);
    if value >= 1e12 {
        since_epoch(value / 1000.0)
    } else if value >= 1e9 {
        since_epoch(value)
    } else {
        Some(now + Duration::try_from_secs_f64(value).ok()?)
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    fn reset(pairs: &[(&'static str, &str)]) -> Option<SystemTime> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        reset_at(&headers, now())
    }

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_800_000_000)
    }

    fn after(secs: f64) -> Option<SystemTime> {
        Some(now() + Duration::from_secs_f64(secs))
    }

    #[test]
    fn each_provider_convention_gives_the_reset_time() {
        assert_eq!(reset(&[("retry-after", "30")]), after(30.0));
        assert_eq!(
            reset(&[("anthropic-ratelimit-tokens-reset", "2027-01-15T08:00:30Z")]),
            Some(humantime::parse_rfc3339("2027-01-15T08:00:30Z").unwrap())
        );
        assert_eq!(reset(&[("x-ratelimit-reset-tokens", "6m0s")]), after(360.0));
        assert_eq!(
            reset(&[("x-ratelimit-reset-requests", "1m2.5s")]),
            after(62.5)
        );
        assert_eq!(
            reset(&[("x-ratelimit-reset-requests", "20ms")]),
            after(0.02)
        );
        assert_eq!(
            reset(&[("x-ratelimit-reset", "1800000090000")]),
            after(90.0),
            "Unix milliseconds"
        );
        assert_eq!(reset(&[("x-ratelimit-reset", "1800000005")]), after(5.0));
        assert_eq!(reset(&[("x-ratelimit-reset", "12")]), after(12.0));
        assert_eq!(reset(&[]), None);
        assert_eq!(reset(&[("x-ratelimit-reset-tokens", "soon")]), None);
    }

    #[test]
    fn retry_after_wins_else_the_latest_reset() {
        assert_eq!(
            reset(&[("retry-after", "3"), ("x-ratelimit-reset-tokens", "6m0s")]),
            after(3.0)
        );
        assert_eq!(
            reset(&[
                ("x-ratelimit-reset-requests", "1s"),
                ("x-ratelimit-reset-tokens", "2m0s")
            ]),
            after(120.0)
        );
    }
}
