//! What `fetch` may connect to: never a loopback, private, link-local or shared (CGNAT)
//! address, the ranges cloud metadata services live in — a model steered by a page it read could otherwise reach the
//! user's own services or a cloud instance's credentials — unless the user listed the host in
//! `tools.fetchAllowHosts`. Checked where the address is known: a URL naming an address is
//! checked before the request and at every redirect, a host name after DNS resolution (the
//! resolver the fetch client uses), so a name that resolves to such an address, or is made to
//! later (DNS rebinding), is refused at every connection.
//!
//! A proxy (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, which reqwest honours) takes the
//! connection-time check away from the target: the client then connects to the proxy only, this
//! resolver resolves the proxy's host, and the proxy resolves and reaches the target. So the
//! target's host is also checked before every request and every redirect
//! (`GuardedResolver::check_target`), resolved as a connection would resolve it and refused with
//! the same words — whether a proxy carries the request or not, which costs a direct fetch one
//! more lookup and spares re-implementing reqwest's choice of proxy. What it cannot close: with
//! a proxy, the address the proxy connects to comes from the proxy's own DNS answer, which can
//! differ from ours (DNS rebinding between our check and its lookup); without one, the
//! connection-time check still closes that. The proxies the environment names are connected
//! to unchecked (`GuardedResolver::trusting`): the user chose them, and a company's proxy at a
//! private address would otherwise fail every fetch.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::net::PROXY_VARIABLES;
use crate::sandbox::allowed;

/// The user's exceptions: hosts `fetch` may reach whatever they resolve to.
#[derive(Debug, Default)]
pub struct Guard {
    /// Host names or addresses; `*.corp.example` for a domain's subdomains.
    allow: Vec<String>,
}

impl Guard {
    pub fn new(allow: Vec<String>) -> Self {
        Guard { allow }
    }

    fn allows(&self, host: &str) -> bool {
        // Entries carry no port (the config refuses one), so any port matches.
        allowed(&self.allow, host, 0)
    }

    /// Refuses `url` when it names a forbidden address itself (no resolution happens then).
    pub fn check_url(&self, url: &Url) -> Result<(), String> {
        let host = url.host_str().unwrap_or_default();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        match bare.parse::<IpAddr>() {
            Ok(address) => self.check_addresses(bare, &[address]),
            Err(_) => Ok(()),
        }
    }

    /// Refuses `host` when one of the addresses it resolved to is forbidden: all of them are
    /// candidates for the connection, so one is enough.
    pub fn check_addresses(&self, host: &str, addresses: &[IpAddr]) -> Result<(), String> {
        if self.allows(host) {
            return Ok(());
        }
        match addresses
            .iter()
            .find_map(|ip| forbidden(*ip).map(|why| (ip, why)))
        {
            None => Ok(()),
            Some((ip, why)) => Err(format!(
                "fetch refuses {host}: it resolves to {ip}, {why}, which fetch never \
                 reaches unless the user adds the host to `tools.fetchAllowHosts`"
            )),
        }
    }
}

/// Why `ip` is off limits, if it is.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => forbidden_v4(ip),
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => forbidden_v4(v4),
            None => forbidden_v6(ip),
        },
    }
}

/// The clouds' metadata services live inside these ranges (AWS, GCP and Azure on link-local
/// IPv4, AWS on unique-local IPv6, Alibaba on the shared range), so the ranges refuse them.
fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some(LINK_LOCAL)
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if ip.is_unspecified() || ip.is_broadcast() || ip.is_multicast() || a == 0 {
        Some("not a host address")
    } else {
        None
    }
}

const LINK_LOCAL: &str = "a link-local address (where clouds serve instance metadata)";

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a private (unique local) address")
    } else if first & 0xffc0 == 0xfe80 {
        Some(LINK_LOCAL)
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some("not a host address")
    } else {
        None
    }
}

/// How a host name becomes addresses: the system's resolver, or a stub in tests.
pub trait Lookup: Send + Sync {
    fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>>;
}

/// The system's resolver (getaddrinfo, through tokio).
struct System;

impl Lookup for System {
    fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(found.map(|address| address.ip()).collect())
        })
    }
}

/// The fetch client's resolver: every name resolved, then checked by the guard — but the
/// proxies'.
pub struct GuardedResolver {
    guard: Arc<Guard>,
    lookup: Arc<dyn Lookup>,
    /// The hosts of the proxies the environment names, connected to unchecked.
    proxies: Vec<String>,
}

/// The hosts of the proxies the environment names.
pub fn environment_proxies() -> Vec<String> {
    PROXY_VARIABLES
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .filter_map(|value| proxy_host(&value))
        .collect()
}

/// The host of a proxy variable's value, which may leave out the scheme (`proxy:3128`).
fn proxy_host(value: &str) -> Option<String> {
    let value = value.trim();
    let url = Url::parse(value)
        .ok()
        .filter(|url| url.has_host())
        .or_else(|| Url::parse(&format!("http://{value}")).ok())?;
    let host = url.host_str()?;
    Some(
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
    )
}

impl GuardedResolver {
    pub fn new(guard: Arc<Guard>) -> Self {
        Self::with_lookup(guard, Arc::new(System))
    }

    pub fn with_lookup(guard: Arc<Guard>, lookup: Arc<dyn Lookup>) -> Self {
        GuardedResolver {
            guard,
            lookup,
            proxies: Vec::new(),
        }
    }

    /// This resolver, connecting to `proxies` (hosts) unchecked: the user's environment
    /// chose them, and a company's proxy at a private address would otherwise fail every
    /// fetch. What a proxy carries is still checked, before each request.
    pub fn trusting(self, proxies: Vec<String>) -> Self {
        GuardedResolver { proxies, ..self }
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// Refuses `url` when its host is, or resolves to, an address fetch never reaches: the
    /// check before every request and redirect (see the module doc). A listed host or an
    /// address is not looked up.
    pub async fn check_target(&self, url: &Url) -> Result<(), String> {
        let host = url.host_str().unwrap_or_default();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if bare.parse::<IpAddr>().is_ok() || self.guard.allows(bare) {
            return self.guard.check_url(url);
        }
        self.resolve_host(bare.to_owned()).await.map(drop)
    }

    /// `host`'s addresses, or why fetch may not use them.
    pub fn resolve_host(&self, host: String) -> BoxFuture<'static, Result<Vec<IpAddr>, String>> {
        let (guard, lookup) = (self.guard.clone(), self.lookup.clone());
        Box::pin(async move {
            let addresses = lookup
                .lookup(host.clone())
                .await
                .map_err(|e| format!("cannot resolve {host}: {e}"))?;
            guard.check_addresses(&host, &addresses)?;
            Ok(addresses)
        })
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let resolving = match self.proxies.contains(&host) {
            true => {
                let lookup = self.lookup.clone();
                Box::pin(async move {
                    let found = lookup.lookup(host.clone()).await;
                    found.map_err(|e| format!("cannot resolve the proxy {host}: {e}"))
                })
            }
            false => self.resolve_host(host),
        };
        Box::pin(async move {
            let addresses = resolving.await?;
            let addrs: Addrs = Box::new(
                addresses
                    .into_iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            Ok(addrs)
        })
    }
}

/// A stub DNS for the guard's tests and the fetch client's (`fetch.rs`).
#[cfg(test)]
pub(super) mod stub {
    use std::sync::Mutex;

    use super::*;

    /// Answers every name with `addresses` and records the names it was asked.
    pub struct Stub {
        /// One answer per lookup, in turn; the last one from then on.
        answers: Vec<Vec<IpAddr>>,
        pub asked: Mutex<Vec<String>>,
    }

    impl Stub {
        pub fn new(addresses: &[&str]) -> Arc<Stub> {
            Stub::answering(&[addresses])
        }

        /// A DNS whose answer changes: `answers[n]` to the `n`th lookup, whatever the name.
        pub fn answering(answers: &[&[&str]]) -> Arc<Stub> {
            let parse =
                |addresses: &&[&str]| addresses.iter().map(|a| a.parse().unwrap()).collect();
            Arc::new(Stub {
                answers: answers.iter().map(parse).collect(),
                asked: Mutex::default(),
            })
        }
    }

    impl Lookup for Stub {
        fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
            let mut asked = self.asked.lock().unwrap();
            asked.push(host);
            let addresses = self.answers[(asked.len() - 1).min(self.answers.len() - 1)].clone();
            Box::pin(async move { Ok(addresses) })
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_proxy_variables_host_is_read_with_or_without_a_scheme() {
        for (value, host) in [
            ("http://proxy.corp:3128", "proxy.corp"),
            ("proxy.corp:3128", "proxy.corp"),
            ("http://user:secret@p.example:8080/", "p.example"),
            ("socks5://[::1]:1080", "::1"),
            (" 10.1.2.3:3128 ", "10.1.2.3"),
        ] {
            assert_eq!(proxy_host(value).as_deref(), Some(host), "{value}");
        }
        assert_eq!(proxy_host(""), None);
    }
    use super::stub::Stub;
    use super::*;

    fn stubbed(addresses: &[&str], allow: &[&str]) -> (GuardedResolver, Arc<Stub>) {
        let stub = Stub::new(addresses);
        let guard = Arc::new(Guard::new(allow.iter().map(|a| a.to_string()).collect()));
        (GuardedResolver::with_lookup(guard, stub.clone()), stub)
    }

    #[test]
    fn classifies_the_addresses_fetch_never_reaches() {
        for (ip, why) in [
            ("127.0.0.1", "a loopback address"),
            ("::1", "a loopback address"),
            ("10.1.2.3", "a private address"),
            ("172.16.0.1", "a private address"),
            ("192.168.1.1", "a private address"),
            ("169.254.169.254", LINK_LOCAL),
            ("100.100.100.200", "a shared (carrier-grade NAT) address"),
            ("fd00:ec2::254", "a private (unique local) address"),
            ("169.254.10.1", LINK_LOCAL),
            ("fe80::1", LINK_LOCAL),
            ("fd12::1", "a private (unique local) address"),
            ("100.64.0.1", "a shared (carrier-grade NAT) address"),
            ("::ffff:10.0.0.1", "a private address"),
            ("0.0.0.0", "not a host address"),
            ("224.0.0.1", "not a host address"),
        ] {
            assert_eq!(forbidden(ip.parse().unwrap()), Some(why), "{ip}");
        }
        for ip in [
            "93.184.215.14",
            "2606:4700::1111",
            "100.128.0.1",
            "172.32.0.1",
        ] {
            assert_eq!(forbidden(ip.parse().unwrap()), None, "{ip}");
        }
    }

    #[tokio::test]
    async fn a_name_resolving_to_a_forbidden_address_is_refused_after_resolution() {
        let (resolver, stub) = stubbed(&["93.184.215.14", "169.254.169.254"], &[]);
        let error = resolver
            .resolve_host("metadata.example".into())
            .await
            .unwrap_err();
        assert_eq!(*stub.asked.lock().unwrap(), ["metadata.example"]);
        assert!(
            error.starts_with(
                "fetch refuses metadata.example: it resolves to 169.254.169.254, a link-local \
                 address (where clouds serve instance metadata)"
            ),
            "{error}"
        );
        assert!(error.contains("`tools.fetchAllowHosts`"), "{error}");
        let (public, _) = stubbed(&["93.184.215.14"], &[]);
        let addresses = public.resolve_host("example.org".into()).await.unwrap();
        assert_eq!(addresses, ["93.184.215.14".parse::<IpAddr>().unwrap()]);
    }

    #[tokio::test]
    async fn a_listed_host_may_resolve_to_anything() {
        let (resolver, _) = stubbed(&["10.0.0.7"], &["*.corp.example"]);
        assert!(
            resolver
                .resolve_host("wiki.corp.example".into())
                .await
                .is_ok()
        );
        assert!(resolver.resolve_host("corp.example".into()).await.is_err());
    }

    #[tokio::test]
    async fn a_target_is_checked_by_name_unless_it_is_listed_or_an_address() {
        let url = |u: &str| Url::parse(u).unwrap();
        let (resolver, stub) = stubbed(&["10.0.0.7"], &["wiki.corp.example"]);
        let error = resolver
            .check_target(&url("https://inner.example/x"))
            .await
            .unwrap_err();
        assert!(
            error.starts_with("fetch refuses inner.example: it resolves to 10.0.0.7"),
            "{error}"
        );
        assert!(
            resolver
                .check_target(&url("http://wiki.corp.example/"))
                .await
                .is_ok()
        );
        let error = resolver
            .check_target(&url("http://[fe80::1]:8080/"))
            .await
            .unwrap_err();
        assert!(error.starts_with("fetch refuses fe80::1"), "{error}");
        assert_eq!(*stub.asked.lock().unwrap(), ["inner.example"]);
        let (public, _) = stubbed(&["93.184.215.14"], &[]);
        assert!(
            public
                .check_target(&url("https://example.org/"))
                .await
                .is_ok()
        );
    }

    #[test]
    fn a_url_naming_an_address_is_checked_without_resolving() {
        let guard = Guard::new(vec!["127.0.0.1".into()]);
        let url = |u: &str| Url::parse(u).unwrap();
        assert!(guard.check_url(&url("http://127.0.0.1:8080/x")).is_ok());
        let error = guard.check_url(&url("http://[::1]/")).unwrap_err();
        assert!(error.starts_with("fetch refuses ::1"), "{error}");
        assert!(
            guard.check_url(&url("http://127.0.0.2/")).is_err(),
            "only the listed address"
        );
        assert!(guard.check_url(&url("https://example.org/")).is_ok());
    }
}
