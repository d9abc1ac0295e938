//! The network allowlist's matching: whether a host and port a command asked the proxy for is
//! on the user's list, and the `host:port` of a proxy request split apart. An entry is a host
//! name (a leading `*.` for its subdomains, not the name itself), an IPv4 address or a
//! bracketed IPv6 one, with an optional `:port` (without one, every port). Names compare
//! without case and without a trailing dot; nothing is resolved, so `localhost` and
//! `127.0.0.1` are different entries.

/// Whether `host` (a name or an address, IPv6 without brackets) on `port` is on `allowlist`.
pub fn allowed(allowlist: &[String], host: &str, port: u16) -> bool {
    let host = normal(host);
    allowlist.iter().any(|entry| {
        let (pattern, entry_port) = split_entry(entry);
        entry_port.is_none_or(|p| p == port) && matches(&normal(pattern), &host)
    })
}

/// The host and port of a proxy request's authority (`example.com:443`, `[::1]:8080`; the
/// IPv6 address comes back without brackets), with `default_port` when it names none; `None`
/// when it is no authority.
pub fn split_authority(authority: &str, default_port: u16) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inner, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':')?),
        };
        (inner, port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(port) => port.parse().ok().filter(|&p| p != 0)?,
        None => default_port,
    };
    let clean = |c: char| !c.is_ascii_control() && !matches!(c, '/' | ' ' | '@');
    (!host.is_empty() && host.chars().all(clean)).then(|| (host.to_owned(), port))
}

/// An entry's host pattern (brackets off an IPv6 address) and its port, if it names one.
fn split_entry(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[') {
        let (inner, after) = rest.split_once(']').unwrap_or((rest, ""));
        return (inner, after.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match entry.rsplit_once(':') {
        Some((host, port)) => match port.parse() {
            Ok(port) => (host, Some(port)),
            Err(_) => (entry, None),
        },
        None => (entry, None),
    }
}

fn matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(suffix) => host
            .strip_suffix(suffix)
            .is_some_and(|label| label.len() > 1 && label.ends_with('.')),
        None => pattern == host,
    }
}

fn normal(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|&e| e.to_owned()).collect()
    }

    #[test]
    fn an_exact_name_matches_itself_on_every_port_without_case() {
        let list = list(&["example.com"]);
        assert!(allowed(&list, "example.com", 443));
        assert!(allowed(&list, "EXAMPLE.com.", 80));
        assert!(!allowed(&list, "www.example.com", 443));
        assert!(!allowed(&list, "example.com.evil.net", 443));
        assert!(!allowed(&list, "badexample.com", 443));
    }

    #[test]
    fn a_wildcard_matches_subdomains_only() {
        let list = list(&["*.npmjs.org"]);
        assert!(allowed(&list, "registry.npmjs.org", 443));
        assert!(allowed(&list, "a.b.npmjs.org", 443));
        assert!(!allowed(&list, "npmjs.org", 443));
        assert!(!allowed(&list, "evilnpmjs.org", 443));
        assert!(!allowed(&list, ".npmjs.org", 443));
    }

    #[test]
    fn a_port_limits_the_entry_to_it() {
        let list = list(&["127.0.0.2:8080", "[::1]:443", "[fe80::1]"]);
        assert!(allowed(&list, "127.0.0.2", 8080));
        assert!(!allowed(&list, "127.0.0.2", 8081));
        assert!(allowed(&list, "::1", 443));
        assert!(!allowed(&list, "::1", 80));
        assert!(allowed(&list, "fe80::1", 22));
        assert!(!allowed(&[], "example.com", 443));
    }

    #[test]
    fn authorities_split_into_host_and_port() {
        assert_eq!(
            split_authority("example.com:443", 80),
            Some(("example.com".into(), 443))
        );
        assert_eq!(
            split_authority("example.com", 80),
            Some(("example.com".into(), 80))
        );
        assert_eq!(
            split_authority("[::1]:8080", 80),
            Some(("::1".into(), 8080))
        );
        assert_eq!(split_authority("[::1]", 443), Some(("::1".into(), 443)));
        for bad in [
            "", ":443", "a:0", "a:x", "[::1", "[::1]x", "u@h:1", "a b:1", "a\r\n:1",
        ] {
            assert_eq!(split_authority(bad, 80), None, "{bad}");
        }
    }
}
