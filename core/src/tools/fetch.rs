//! `fetch`: an HTTP(S) GET of a text resource (a documentation page, a JSON API, a raw
//! file), capped in size and time. HTML comes back as readable text. Never to a loopback,
//! private, link-local or metadata address unless the user allowed the host
//! (`fetch_guard.rs`): the host is checked before the request and every redirect, which
//! this file follows itself so that the check can resolve the name, and again at every
//! connection.

use std::sync::Arc;

use reqwest::dns::Resolve;
use reqwest::{ClientBuilder, Url, header};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::fetch_guard::GuardedResolver;
use super::html;
use super::{About, Access, CallReport, Context, Kind, Output, Planned, Result, Tool, ToolError};
use crate::net::{LazyClient, root_cause};

pub struct Fetch {
    http: Arc<LazyClient>,
    guard: Arc<GuardedResolver>,
}

impl Fetch {
    /// `http` is the engine's fetch client (`http_client`, built with `guard`), shared by
    /// every session; `guard` also checks each request's host before it is sent.
    pub fn new(http: Arc<LazyClient>, guard: Arc<GuardedResolver>) -> Self {
        Fetch { http, guard }
    }
}

/// How many redirects a fetch follows.
const MAX_REDIRECTS: usize = 5;

/// How much of an error page is quoted back to the model.
const ERROR_EXCERPT_BYTES: usize = 500;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// An absolute http:// or https:// URL.
    url: String,
}

/// What the model is told `fetch` does.
const DESCRIPTION: &str = "Fetch a web page or text resource with an HTTP GET: documentation, \
    a JSON API response, a raw file. HTML is returned as plain text (no scripts, \
    styles or markup); JSON and other text as is. Binary content (images, PDFs, \
    archives) is refused. Large responses are cut.";

impl Tool for Fetch {
    type Input = Input;
    type Plan = Url;

    async fn prepare(&self, input: Input, _ctx: &Context) -> Result<Planned<Url>> {
        let url = Url::parse(input.url.trim())
            .map_err(|e| ToolError(format!("`{}` is not a valid URL: {e}", input.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError(format!(
                "only http and https URLs can be fetched, not {}:",
                url.scheme()
            )));
        }
        Ok(Planned::new(
            format!("Fetch {url}"),
            Vec::new(),
            Access::Network(url.to_string()),
            url,
        ))
    }

    async fn run(&self, url: Url, ctx: &Context, _report: &dyn CallReport) -> Result<Output> {
        self.guard.guard().check_url(&url).map_err(ToolError)?;
        let timeout = ctx.limits.fetch_timeout;
        let fetched = tokio::select! {
            _ = ctx.cancel.cancelled() => return Err(ToolError("cancelled".into())),
            fetched = tokio::time::timeout(timeout, get(&self.http, &self.guard, &url, ctx.limits.fetch_max_bytes)) => fetched,
        };
        let page = fetched.map_err(|_| {
            ToolError(format!(
                "{url} did not answer within {}",
                humantime::format_duration(timeout)
            ))
        })??;
        page.into_output(&url)
    }

    fn about(&self) -> About {
        About::new("fetch", Kind::Fetch, DESCRIPTION)
    }
}

/// The client the fetch tool uses: the engine's TLS setup (see `net.rs`), built on first use,
/// every name it connects to resolved through `guard`, redirects left to `get`.
pub fn http_client(guard: Arc<GuardedResolver>) -> LazyClient {
    LazyClient::new(move |builder| with_policy(builder, guard.clone()))
}

/// `builder` with fetch's policy — no redirects of its own, `resolver` (the guard's) for every
/// name it connects to: the one place the policy is set, so the tests drive the client the
/// tool uses (with a stub lookup).
fn with_policy(builder: ClientBuilder, resolver: Arc<dyn Resolve>) -> ClientBuilder {
    builder
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(resolver)
}

/// Where `response` to a request for `at` redirects, when it is a redirect to follow (the
/// statuses reqwest follows, with a `Location` it can read).
fn redirect(at: &Url, response: &reqwest::Response) -> Option<Url> {
    use reqwest::StatusCode as S;
    let status = response.status();
    if ![
        S::MOVED_PERMANENTLY,
        S::FOUND,
        S::SEE_OTHER,
        S::TEMPORARY_REDIRECT,
        S::PERMANENT_REDIRECT,
    ]
    .contains(&status)
    {
        return None;
    }
    let location = response.headers().get(header::LOCATION)?.to_str().ok()?;
    at.join(location).ok()
}

/// How a body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Html,
    Text,
    /// No content type: decided by looking at the bytes.
    Unknown,
}

struct Page {
    status: u16,
    mime: String,
    body: Vec<u8>,
    truncated: bool,
    format: Format,
}

/// GETs `url`, following up to `MAX_REDIRECTS` redirects, all on its host: permission was
/// given for that host, and a redirect must not carry the request to another one (say, a
/// cloud metadata address); a redirect elsewhere is the answer. Before each request `guard`
/// checks the host — the check that still holds when a proxy carries the request.
async fn get(
    http: &LazyClient,
    guard: &GuardedResolver,
    url: &Url,
    max_bytes: usize,
) -> Result<Page> {
    let failed = |why: String| ToolError(format!("fetching {url} failed: {why}"));
    let client = http.get().map_err(ToolError)?;
    let mut at = url.clone();
    let mut redirects = 0;
    let mut response = loop {
        guard.check_target(&at).await.map_err(failed)?;
        let response = client
            .get(at.clone())
            .header(
                header::ACCEPT,
                "text/html, text/plain;q=0.9, application/json;q=0.9, text/*;q=0.8, */*;q=0.1",
            )
            .send()
            .await
            .map_err(|e| failed(root_cause(&e)))?;
        let Some(next) = redirect(&at, &response) else {
            break response;
        };
        redirects += 1;
        if redirects > MAX_REDIRECTS {
            return Err(failed("too many redirects".into()));
        }
        if next.host_str() != url.host_str() {
            break response;
        }
        at = next;
    };
    let status = response.status();
    let mime = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|mime| mime.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let format = classify(&mime);
    let limit = if status.is_success() {
        max_bytes
    } else {
        ERROR_EXCERPT_BYTES
    };
    let (body, truncated) = match format {
        Some(_) => read_body(&mut response, limit)
            .await
            .map_err(|e| failed(root_cause(&e)))?,
        None => (Vec::new(), false),
    };
    let page = Page {
        status: status.as_u16(),
        mime,
        body,
        truncated,
        format: format.unwrap_or(Format::Unknown),
    };
    if !status.is_success() {
        return Err(ToolError(format!(
            "{url} answered HTTP {status}: {}",
            page.text().trim()
        )));
    }
    if format.is_none() {
        return Err(ToolError(format!(
            "{url} is {}, which is not text; fetch reads HTML, JSON and other text",
            page.mime
        )));
    }
    Ok(page)
}

/// At most `limit` bytes of the body; `true` when there was more.
async fn read_body(
    response: &mut reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if chunk.len() > room {
            return Ok((body, true));
        }
    }
    Ok((body, false))
}

/// The format of a declared content type; `None` for a type that is not text.
fn classify(mime: &str) -> Option<Format> {
    let text_like = mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-sh"
                | "application/sql"
                | "application/graphql"
        );
    match mime {
        "text/html" | "application/xhtml+xml" => Some(Format::Html),
        "" => Some(Format::Unknown),
        _ if text_like => Some(Format::Text),
        _ => None,
    }
}

impl Page {
    fn format(&self) -> Result<Format> {
        match self.format {
            Format::Unknown if self.body.contains(&0) => {
                Err(ToolError("the response is binary, not text".into()))
            }
            Format::Unknown => {
                let start = String::from_utf8_lossy(&self.body[..self.body.len().min(512)])
                    .trim_start()
                    .to_ascii_lowercase();
                let html = start.starts_with("<!doctype html") || start.starts_with("<html");
                Ok(if html { Format::Html } else { Format::Text })
            }
            known => Ok(known),
        }
    }

    fn text(&self) -> String {
        let raw = String::from_utf8_lossy(&self.body);
        match self.format() {
            Ok(Format::Html) => html::to_text(&raw),
            _ => raw.into_owned(),
        }
    }

    fn into_output(self, url: &Url) -> Result<Output> {
        self.format()?;
        let text = self.text();
        let mime = if self.mime.is_empty() {
            "no content type"
        } else {
            &self.mime
        };
        let mut for_model = format!("{url} ({mime}, {} bytes)\n\n{text}", self.body.len());
        if self.truncated {
            for_model.push_str(&format!(
                "\n… [cut after the first {} bytes of the response] …\n",
                self.body.len()
            ));
        }
        Ok(Output {
            for_model,
            raw_output: Some(json!({
                "status": self.status,
                "contentType": self.mime,
                "bytes": self.body.len(),
                "truncated": self.truncated,
            })),
            ..Output::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::tools::fetch_guard::Guard;
    use crate::tools::fetch_guard::stub::Stub;
    use crate::tools::testing::{call, context, prepare, workspace};

    const LINK_LOCAL: &str = "a link-local address (where clouds serve instance metadata)";

    /// The tool as configured for these tests: the local test server's host allowed.
    fn fetch() -> Fetch {
        guarded(&["127.0.0.1", "localhost"])
    }

    fn guarded(allow: &[&str]) -> Fetch {
        let guard = Arc::new(GuardedResolver::new(allowing(allow)));
        Fetch::new(Arc::new(http_client(guard.clone())), guard)
    }

    fn allowing(allow: &[&str]) -> Arc<Guard> {
        Arc::new(Guard::new(allow.iter().map(|a| a.to_string()).collect()))
    }

    /// A tiny HTTP/1.1 server with canned answers; returns its base URL.
    async fn serve() -> String {
        serve_counted().await.0
    }

    /// `serve`, and how many connections it accepted so far.
    async fn serve_counted() -> (String, Arc<AtomicUsize>) {
        let (base, accepted, _) = serve_recording().await;
        (base, accepted)
    }

    /// The request lines a server received.
    type Requests = Arc<Mutex<Vec<String>>>;

    /// `serve_counted`, and the request lines it received. It is an HTTP proxy too: a request
    /// for a whole URL (`GET http://docs.test/data.json`) gets the answer for its path, whatever
    /// the host — the server resolves and reaches nothing.
    async fn serve_recording() -> (String, Arc<AtomicUsize>, Requests) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Requests::default();
        let (counter, recorder) = (accepted.clone(), requests.clone());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(answer(socket, recorder.clone()));
            }
        });
        (base, accepted, requests)
    }

    async fn answer(mut socket: TcpStream, requests: Requests) {
        let mut request = Vec::new();
        let mut chunk = [0; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&chunk[..n]),
            }
        }
        let request = String::from_utf8_lossy(&request).into_owned();
        let line = request.lines().next().unwrap_or_default();
        requests.lock().unwrap().push(line.to_owned());
        let target = request.split_whitespace().nth(1).unwrap_or("/");
        let path = match target.strip_prefix("http://") {
            Some(url) => url.find('/').map_or("/", |slash| &url[slash..]),
            None => target,
        };
        let page = "<html><head><title>Guide</title><script>track()</script></head>\
                    <body><h1>Hello</h1><p>a &lt;b&gt; c</p></body></html>";
        let (status, mime, body): (&str, Option<&str>, Vec<u8>) = match path {
            "/page.html" => ("200 OK", Some("text/html; charset=utf-8"), page.into()),
            "/data.json" => (
                "200 OK",
                Some("application/json"),
                br#"{"ok":true}"#.to_vec(),
            ),
            "/big.txt" => ("200 OK", Some("text/plain"), vec![b'a'; 100_000]),
            "/image.png" => (
                "200 OK",
                Some("image/png"),
                b"\x89PNG\r\n\x1a\n\0\0".to_vec(),
            ),
            "/untyped" => ("200 OK", None, b"just text".to_vec()),
            "/untyped-binary" => ("200 OK", None, b"ab\0cd".to_vec()),
            "/old" | "/loop" => ("301 Moved Permanently", Some("text/plain"), Vec::new()),
            "/elsewhere" | "/to-address" | "/to-metadata" => {
                ("302 Found", Some("text/plain"), b"moved".to_vec())
            }
            "/slow" => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            _ => (
                "404 Not Found",
                Some("text/plain"),
                b"nothing here".to_vec(),
            ),
        };
        let mut head = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        if let Some(mime) = mime {
            head.push_str(&format!("Content-Type: {mime}\r\n"));
        }
        if path == "/old" {
            head.push_str("Location: /data.json\r\n");
        }
        if path == "/loop" {
            head.push_str("Location: /loop\r\n");
        }
        // The port the request came to, whichever name it used.
        let port = request
            .split("Host: ")
            .nth(1)
            .and_then(|r| r.split("\r\n").next())
            .and_then(|host| host.rsplit_once(':'))
            .map_or("1", |(_, port)| port);
        if path == "/to-address" {
            // Same server, by address: a host the guard refuses.
            head.push_str(&format!("Location: http://127.0.0.1:{port}/data.json\r\n"));
        }
        if path == "/elsewhere" {
            // Same server, another host name: the redirect must not be followed.
            head.push_str(&format!("Location: http://localhost:{port}/data.json\r\n"));
        }
        if path == "/to-metadata" {
            // A name the tests' stub DNS resolves to a metadata address.
            head.push_str(&format!(
                "Location: http://metadata.test:{port}/data.json\r\n"
            ));
        }
        head.push_str("\r\n");
        let _ = socket.write_all(head.as_bytes()).await;
        let _ = socket.write_all(&body).await;
    }

    /// Counts what the fetch client's connector did. The connector resolves the name too, so
    /// a name refused there reaches it (`attempts`); what must never happen is a connection
    /// that completes (`completed`).
    #[derive(Clone, Default)]
    struct Connections {
        attempts: Arc<AtomicUsize>,
        completed: Arc<AtomicUsize>,
    }

    impl Connections {
        fn attempts(&self) -> usize {
            self.attempts.load(Ordering::SeqCst)
        }

        fn completed(&self) -> usize {
            self.completed.load(Ordering::SeqCst)
        }
    }

    impl<S> tower::Layer<S> for Connections {
        type Service = Counted<S>;

        fn layer(&self, inner: S) -> Counted<S> {
            Counted {
                inner,
                connections: self.clone(),
            }
        }
    }

    /// The client's connector, counted.
    #[derive(Clone)]
    struct Counted<S> {
        inner: S,
        connections: Connections,
    }

    impl<S, R> tower::Service<R> for Counted<S>
    where
        S: tower::Service<R>,
        S::Response: Send + 'static,
        S::Error: Send + 'static,
        S::Future: Send + 'static,
    {
        type Response = S::Response;
        type Error = S::Error;
        type Future = futures::future::BoxFuture<'static, Result<S::Response, S::Error>>;

        fn poll_ready(
            &mut self,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), S::Error>> {
            self.inner.poll_ready(cx)
        }

        fn call(&mut self, destination: R) -> Self::Future {
            self.connections.attempts.fetch_add(1, Ordering::SeqCst);
            let completed = self.connections.completed.clone();
            let connecting = self.inner.call(destination);
            Box::pin(async move {
                let connection = connecting.await;
                if connection.is_ok() {
                    completed.fetch_add(1, Ordering::SeqCst);
                }
                connection
            })
        }
    }

    /// Sits between the guard and the socket: should the guard ever let an address other than
    /// loopback through, the connection fails here, before a packet is sent to it, and the
    /// test fails on the message.
    struct Tripwire(Arc<GuardedResolver>);

    impl Resolve for Tripwire {
        fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
            let resolving = self.0.resolve(name);
            Box::pin(async move {
                let addresses: Vec<_> = resolving.await?.collect();
                match addresses.iter().find(|a| !a.ip().is_loopback()) {
                    Some(leaked) => Err(format!("the guard let {leaked} through").into()),
                    None => Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs),
                }
            })
        }
    }

    /// The fetch tool on its real client, set up by `with_policy` as `http_client` does, except
    /// that every name resolves to `addresses` and the connector is counted.
    fn stubbed(addresses: &[&str], allow: &[&str]) -> (Fetch, Arc<Stub>, Connections) {
        let stub = Stub::new(addresses);
        let (tool, connections) = on_stub(stub.clone(), allow, None);
        (tool, stub, connections)
    }

    /// `stubbed` on `stub`, every request carried by `proxy` when there is one, none otherwise
    /// (whatever the environment says).
    fn on_stub(stub: Arc<Stub>, allow: &[&str], proxy: Option<&str>) -> (Fetch, Connections) {
        let guard = GuardedResolver::with_lookup(allowing(allow), stub);
        on_guard(guard, proxy)
    }

    /// `on_stub` with `guard`.
    fn on_guard(guard: GuardedResolver, proxy: Option<&str>) -> (Fetch, Connections) {
        let guard = Arc::new(guard);
        let connections = Connections::default();
        let (on_guard, on_connections) = (guard.clone(), connections.clone());
        let proxy = proxy.map(|url| reqwest::Proxy::all(url).unwrap());
        let client = LazyClient::new(move |builder| {
            let builder = match &proxy {
                Some(proxy) => builder.proxy(proxy.clone()),
                None => builder.no_proxy(),
            };
            with_policy(builder, Arc::new(Tripwire(on_guard.clone())))
                .connector_layer(on_connections.clone())
        });
        (Fetch::new(Arc::new(client), guard), connections)
    }

    /// Refused by the check before the request, which the connector never sees.
    #[tokio::test]
    async fn names_resolving_to_forbidden_addresses_are_refused_and_never_connected() {
        let (base, accepted) = serve_counted().await;
        let port = base.rsplit(':').next().unwrap();
        let (_dir, ctx) = workspace();
        for (address, why) in [
            ("10.0.0.1", "a private address"),
            ("169.254.169.254", LINK_LOCAL),
            ("fd00::1", "a private (unique local) address"),
            ("127.0.0.1", "a loopback address"),
        ] {
            let (tool, stub, connections) = stubbed(&[address], &[]);
            let url = format!("http://inner.test:{port}/data.json");
            let error = whatever_came(&tool, url.clone(), &ctx).await;
            assert_eq!(error, refusal(&url, "inner.test", address, why));
            assert_eq!(*stub.asked.lock().unwrap(), ["inner.test"]);
            assert_eq!(
                connections.attempts(),
                0,
                "{address}: refused only at the connection"
            );
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 0);
    }

    /// The check at the connection stays: a name whose answer changes between the check before
    /// the request and the connection's own lookup (DNS rebinding) is refused there.
    #[tokio::test]
    async fn a_name_rebound_after_the_check_is_refused_at_the_connection() {
        let (base, accepted) = serve_counted().await;
        let port = base.rsplit(':').next().unwrap();
        let (_dir, ctx) = workspace();
        // The public answer is only checked, never connected to: the connection gets the second.
        let stub = Stub::answering(&[&["93.184.215.14"], &["10.0.0.1"]]);
        let (tool, connections) = on_stub(stub.clone(), &[], None);
        let url = format!("http://inner.test:{port}/data.json");
        let error = whatever_came(&tool, url.clone(), &ctx).await;
        assert_eq!(
            error,
            refusal(&url, "inner.test", "10.0.0.1", "a private address")
        );
        assert_eq!(*stub.asked.lock().unwrap(), ["inner.test", "inner.test"]);
        assert_eq!(connections.attempts(), 1, "the layer is in the path");
        assert_eq!(connections.completed(), 0, "a connection completed");
        assert_eq!(accepted.load(Ordering::SeqCst), 0);
    }

    /// Through a proxy the client connects to the proxy only, so the connection's check sees
    /// the proxy's address (an address here: not resolved at all). The target's host is checked
    /// before the request, and a refused one never reaches the proxy.
    #[tokio::test]
    async fn through_a_proxy_names_resolving_to_forbidden_addresses_are_refused_before_it() {
        let (proxy, accepted, requests) = serve_recording().await;
        let (_dir, ctx) = workspace();
        for (address, why) in [
            ("10.0.0.1", "a private address"),
            ("169.254.169.254", LINK_LOCAL),
            ("fd00:ec2::254", "a private (unique local) address"),
            ("127.0.0.1", "a loopback address"),
        ] {
            let stub = Stub::new(&[address]);
            let (tool, connections) = on_stub(stub.clone(), &[], Some(&proxy));
            let url = "http://metadata.test/latest/meta-data/";
            let error = whatever_came(&tool, url.into(), &ctx).await;
            assert_eq!(error, refusal(url, "metadata.test", address, why));
            assert_eq!(*stub.asked.lock().unwrap(), ["metadata.test"]);
            assert_eq!(connections.attempts(), 0, "{address}: the request was sent");
        }
        // An address in the URL is refused as it was, without resolving.
        let stub = Stub::new(&[]);
        let (tool, _) = on_stub(stub.clone(), &[], Some(&proxy));
        let error = whatever_came(&tool, "http://[fd00:ec2::254]/".into(), &ctx).await;
        assert!(
            error.starts_with("fetch refuses fd00:ec2::254: it resolves to fd00:ec2::254"),
            "{error}"
        );
        assert!(stub.asked.lock().unwrap().is_empty());
        assert!(requests.lock().unwrap().is_empty(), "{requests:?}");
        assert_eq!(accepted.load(Ordering::SeqCst), 0);
    }

    /// A proxy the environment names by a host that resolves to a private or loopback address
    /// (a company's) is connected to: the user chose it. What it carries is still checked.
    #[tokio::test]
    async fn a_proxy_named_by_the_environment_is_reached_at_its_own_address() {
        let (proxy, accepted, requests) = serve_recording().await;
        let port = proxy.rsplit(':').next().unwrap();
        let (_dir, ctx) = workspace();
        // docs.test's (public, only checked), then the proxy's (loopback, connected to).
        let stub = Stub::answering(&[&["93.184.215.14"], &["127.0.0.1"]]);
        let guard = GuardedResolver::with_lookup(allowing(&[]), stub.clone())
            .trusting(vec!["proxy.test".into()]);
        let (tool, _) = on_guard(guard, Some(&format!("http://proxy.test:{port}")));
        let output = call(&tool, json!({ "url": "http://docs.test/data.json" }), &ctx)
            .await
            .unwrap();
        assert!(
            output.for_model.ends_with("{\"ok\":true}"),
            "{}",
            output.for_model
        );
        assert_eq!(*stub.asked.lock().unwrap(), ["docs.test", "proxy.test"]);
        assert_eq!(
            *requests.lock().unwrap(),
            ["GET http://docs.test/data.json HTTP/1.1"]
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 1);

        // The proxy's host as a target is checked as any other.
        let stub = Stub::new(&["127.0.0.1"]);
        let guard =
            GuardedResolver::with_lookup(allowing(&[]), stub).trusting(vec!["proxy.test".into()]);
        let (tool, _) = on_guard(guard, None);
        let url = format!("http://proxy.test:{port}/");
        let error = whatever_came(&tool, url.clone(), &ctx).await;
        assert_eq!(
            error,
            refusal(&url, "proxy.test", "127.0.0.1", "a loopback address")
        );
    }

    /// A host the guard permits goes through the proxy, and so does its redirect, the host
    /// checked before each request.
    #[tokio::test]
    async fn through_a_proxy_a_permitted_host_is_fetched_with_its_redirects() {
        let (proxy, accepted, requests) = serve_recording().await;
        let (_dir, ctx) = workspace();
        // A public answer, only checked: the client connects to the proxy alone (and `Tripwire`
        // would fail the fetch before a connection to it).
        let stub = Stub::new(&["93.184.215.14"]);
        let (tool, connections) = on_stub(stub.clone(), &[], Some(&proxy));
        let output = call(&tool, json!({ "url": "http://docs.test/old" }), &ctx)
            .await
            .unwrap();
        assert!(
            output
                .for_model
                .starts_with("http://docs.test/old (application/json, 11 bytes)"),
            "{}",
            output.for_model
        );
        assert!(output.for_model.ends_with("{\"ok\":true}"));
        assert_eq!(
            *requests.lock().unwrap(),
            [
                "GET http://docs.test/old HTTP/1.1",
                "GET http://docs.test/data.json HTTP/1.1"
            ]
        );
        assert_eq!(*stub.asked.lock().unwrap(), ["docs.test", "docs.test"]);
        assert_eq!(connections.completed(), 2, "the proxy's, one per request");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    /// A redirect through a proxy is checked too: here to the same name, which now resolves to
    /// a metadata address (as our resolver sees it). A redirect to another host is not followed
    /// at all, proxy or not.
    #[tokio::test]
    async fn through_a_proxy_a_redirect_to_a_refused_address_is_refused() {
        let (proxy, _, requests) = serve_recording().await;
        let (_dir, ctx) = workspace();
        let stub = Stub::answering(&[&["93.184.215.14"], &["169.254.169.254"]]);
        let (tool, _) = on_stub(stub.clone(), &[], Some(&proxy));
        let url = "http://docs.test/old";
        let error = whatever_came(&tool, url.into(), &ctx).await;
        assert_eq!(
            error,
            refusal(url, "docs.test", "169.254.169.254", LINK_LOCAL)
        );
        assert_eq!(*stub.asked.lock().unwrap(), ["docs.test", "docs.test"]);
        assert_eq!(
            *requests.lock().unwrap(),
            ["GET http://docs.test/old HTTP/1.1"]
        );

        let stub = Stub::new(&["93.184.215.14"]);
        let (tool, _) = on_stub(stub.clone(), &[], Some(&proxy));
        let url = "http://docs.test/to-metadata";
        let error = whatever_came(&tool, url.into(), &ctx).await;
        assert_eq!(error, format!("{url} answered HTTP 302 Found: moved"));
        assert_eq!(*stub.asked.lock().unwrap(), ["docs.test"]);
        assert_eq!(
            requests.lock().unwrap()[1..],
            ["GET http://docs.test/to-metadata HTTP/1.1"]
        );
    }

    /// The redirect names another host, so the same-host policy stops it before the guard
    /// or the resolver is asked: the 302 comes back as the answer.
    #[tokio::test]
    async fn a_redirect_to_a_name_resolving_to_metadata_is_not_followed() {
        let (base, accepted) = serve_counted().await;
        let (_dir, ctx) = workspace();
        let (tool, stub, connections) = stubbed(&["169.254.169.254"], &["127.0.0.1"]);
        let url = format!("{base}/to-metadata");
        let error = call(&tool, json!({ "url": url }), &ctx)
            .await
            .unwrap_err()
            .0;
        assert_eq!(error, format!("{url} answered HTTP 302 Found: moved"));
        assert!(
            stub.asked.lock().unwrap().is_empty(),
            "metadata.test resolved"
        );
        assert_eq!(connections.completed(), 1, "only the loopback server's");
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn an_allowed_name_resolving_to_loopback_connects() {
        let (base, accepted) = serve_counted().await;
        let port = base.rsplit(':').next().unwrap();
        let (_dir, ctx) = workspace();
        let (tool, stub, connections) = stubbed(&["127.0.0.1"], &["docs.test"]);
        let url = format!("http://docs.test:{port}/data.json");
        let output = call(&tool, json!({ "url": url }), &ctx).await.unwrap();
        assert!(
            output.for_model.ends_with("{\"ok\":true}"),
            "{}",
            output.for_model
        );
        assert_eq!(*stub.asked.lock().unwrap(), ["docs.test"]);
        assert_eq!(
            connections.completed(),
            1,
            "the layer sees real connections"
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    /// What the model reads of a fetch of `url`, a result or an error.
    async fn whatever_came(tool: &Fetch, url: String, ctx: &Context) -> String {
        match call(tool, json!({ "url": url }), ctx).await {
            Ok(output) => output.for_model,
            Err(e) => e.0,
        }
    }

    /// What the model reads when a fetch of `url` is refused: `host` resolves to `address`.
    fn refusal(url: &str, host: &str, address: &str, why: &str) -> String {
        format!(
            "fetching {url} failed: fetch refuses {host}: it resolves to {address}, {why}, which \
             fetch never reaches unless the user adds the host to `tools.fetchAllowHosts`"
        )
    }

    #[tokio::test]
    async fn fetches_html_as_text() {
        let base = serve().await;
        let (_dir, ctx) = workspace();
        let url = format!("{base}/page.html");
        let prepared = prepare(&fetch(), json!({ "url": url }), &ctx)
            .await
            .unwrap();
        assert_eq!(prepared.title, format!("Fetch {url}"));
        assert_eq!(prepared.access, Access::Network(url.clone()));

        let output = call(&fetch(), json!({ "url": url }), &ctx).await.unwrap();
        assert!(
            output.for_model.starts_with(&format!("{url} (text/html, ")),
            "{}",
            output.for_model
        );
        assert!(
            output.for_model.ends_with("\n\nGuide\nHello\na <b> c"),
            "{}",
            output.for_model
        );
        assert_eq!(output.raw_output.unwrap()["status"], 200);
    }

    #[tokio::test]
    async fn redirects_to_another_host_are_not_followed() {
        let base = serve().await;
        let (_dir, ctx) = workspace();
        let text = whatever_came(&fetch(), format!("{base}/elsewhere"), &ctx).await;
        assert!(
            !text.contains("\"ok\":true"),
            "followed the redirect: {text}"
        );
        assert!(text.contains("302"), "{text}");
    }

    #[tokio::test]
    async fn loopback_is_refused_by_address_and_by_name_and_the_server_sees_nothing() {
        let (base, accepted) = serve_counted().await;
        let (_dir, ctx) = workspace();
        let ctx = &ctx;
        let refused = |url: String| async move {
            call(&guarded(&[]), json!({ "url": url }), ctx)
                .await
                .unwrap_err()
                .0
        };
        let by_address = refused(format!("{base}/data.json")).await;
        assert!(
            by_address.starts_with(
                "fetch refuses 127.0.0.1: it resolves to 127.0.0.1, a loopback address"
            ),
            "{by_address}"
        );
        let port = base.rsplit(':').next().unwrap();
        let by_name = refused(format!("http://localhost:{port}/data.json")).await;
        assert!(by_name.contains("fetch refuses localhost"), "{by_name}");
        assert!(by_name.contains("a loopback address"), "{by_name}");
        assert_eq!(accepted.load(Ordering::SeqCst), 0, "no connection was made");
        // Listed, the same server answers.
        let output = call(
            &guarded(&["localhost"]),
            json!({ "url": format!("http://localhost:{port}/data.json") }),
            ctx,
        )
        .await
        .unwrap();
        assert!(
            output.for_model.ends_with("{\"ok\":true}"),
            "{}",
            output.for_model
        );
    }

    #[tokio::test]
    async fn a_redirect_to_a_refused_address_is_not_followed() {
        let (base, accepted) = serve_counted().await;
        let port = base.rsplit(':').next().unwrap();
        let (_dir, ctx) = workspace();
        // Only the name is listed: the redirect names the address, which is refused.
        let url = format!("http://localhost:{port}/to-address");
        let text = whatever_came(&guarded(&["localhost"]), url, &ctx).await;
        assert!(
            !text.contains("\"ok\":true"),
            "followed the redirect: {text}"
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "only the first request");
    }

    #[tokio::test]
    async fn fetches_json_and_follows_redirects() {
        let base = serve().await;
        let (_dir, ctx) = workspace();
        let output = call(&fetch(), json!({ "url": format!("{base}/old") }), &ctx)
            .await
            .unwrap();
        assert!(
            output
                .for_model
                .ends_with("(application/json, 11 bytes)\n\n{\"ok\":true}"),
            "{}",
            output.for_model
        );
        let output = call(&fetch(), json!({ "url": format!("{base}/untyped") }), &ctx)
            .await
            .unwrap();
        assert!(
            output
                .for_model
                .ends_with("(no content type, 9 bytes)\n\njust text"),
            "{}",
            output.for_model
        );
    }

    #[tokio::test]
    async fn follows_five_redirects_at_most() {
        let (base, accepted) = serve_counted().await;
        let (_dir, ctx) = workspace();
        let url = format!("{base}/loop");
        let error = whatever_came(&fetch(), url.clone(), &ctx).await;
        assert_eq!(error, format!("fetching {url} failed: too many redirects"));
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            6,
            "the request and 5 redirects"
        );
    }

    #[tokio::test]
    async fn caps_the_size() {
        let base = serve().await;
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = context(dir.path());
        ctx.limits.fetch_max_bytes = 1000;
        let output = call(&fetch(), json!({ "url": format!("{base}/big.txt") }), &ctx)
            .await
            .unwrap();
        assert!(
            output
                .for_model
                .contains(&format!("\n\n{}\n", "a".repeat(1000)))
        );
        assert!(
            output
                .for_model
                .ends_with("… [cut after the first 1000 bytes of the response] …\n")
        );
        assert_eq!(output.raw_output.unwrap()["truncated"], true);
    }

    #[tokio::test]
    async fn refuses_binary_errors_and_bad_urls() {
        let base = serve().await;
        let dir = tempfile::tempdir().unwrap();
        let ctx = &context(dir.path());
        let error = |url: String| async move {
            call(&fetch(), json!({ "url": url }), ctx)
                .await
                .unwrap_err()
                .0
        };

        assert!(
            error(format!("{base}/image.png")).await.ends_with(
                "is image/png, which is not text; fetch reads HTML, JSON and other text"
            )
        );
        assert_eq!(
            error(format!("{base}/untyped-binary")).await,
            "the response is binary, not text"
        );
        assert_eq!(
            error(format!("{base}/gone")).await,
            format!("{base}/gone answered HTTP 404 Not Found: nothing here")
        );
        assert!(
            error("ftp://example.com/x".into())
                .await
                .starts_with("only http and https URLs")
        );
        assert!(
            error("not a url".into())
                .await
                .starts_with("`not a url` is not a valid URL")
        );
    }

    #[tokio::test]
    async fn gives_up_after_the_timeout() {
        let base = serve().await;
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = context(dir.path());
        ctx.limits.fetch_timeout = Duration::from_millis(300);
        let error = call(&fetch(), json!({ "url": format!("{base}/slow") }), &ctx)
            .await
            .unwrap_err();
        assert!(
            error.0.ends_with("/slow did not answer within 300ms"),
            "{error}"
        );
    }
}
