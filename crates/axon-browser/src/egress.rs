//! Every request the browser makes goes through here, so that the host rules
//! hold for all of them, not only the URL a call names.
//!
//! A page can leave an allowed host in many ways: a redirect, a link, a
//! script's `location = …`, an iframe, a popup, a worker, an `<img>`, a
//! WebSocket. Checking the URL of `browser_navigate` sees none of them. So
//! Chromium is launched with this process's own forward proxy as its only way
//! out (`--proxy-server`, with `<-loopback>` so that loopback is not exempt),
//! and the proxy checks every request before connecting: its host against
//! `[browser] allow_hosts` / `deny_hosts`, and every address the host resolves
//! to against the addresses no tool reaches (`axon_core::network`: link-local
//! and cloud metadata addresses, this proxy, Chromium's DevTools port, the
//! `axon serve` listener). HTTPS is checked at
//! its `CONNECT` (host and port; the traffic stays encrypted end to end); plain
//! HTTP per request, each on a connection of its own. A refused request gets a
//! 403 whose body says why; the page never sees the refused host's content.
//!
//! What it does not see: `file:`, `data:` and `blob:` URLs (no network;
//! `file:` is refused by [`crate::BrowserConfig::check_url`] and Chromium
//! keeps pages of other schemes from opening it).

use std::net::SocketAddr;
use std::sync::Arc;

use axon_core::network;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::session::BrowserConfig;

/// The longest request head read (a URL and its headers).
const MAX_HEAD: usize = 64 * 1024;

/// The proxy of one browser: where it listens.
pub(crate) struct Egress {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Egress {
    fn drop(&mut self) {
        self.task.abort();
        network::forget_own_port(self.addr.port());
    }
}

/// The host rules the proxy holds the browser to.
struct Rules {
    config: BrowserConfig,
}

impl Egress {
    /// Listen on a loopback port and serve until dropped.
    pub(crate) async fn start(config: BrowserConfig) -> std::io::Result<Egress> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        network::register_own_port(addr.port());
        let rules = Arc::new(Rules { config });
        let task = tokio::spawn(async move {
            loop {
                let Ok((conn, _)) = listener.accept().await else {
                    continue;
                };
                let rules = rules.clone();
                tokio::spawn(async move {
                    if let Err(e) = relay(conn, &rules).await {
                        tracing::trace!(error = %e, "browser proxy connection ended");
                    }
                });
            }
        });
        Ok(Egress { addr, task })
    }

    /// `--proxy-server`'s value.
    pub(crate) fn proxy_server(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Rules {
    /// Why a connection to `host:port` is refused, if it is: the host rules,
    /// then every address it resolves to. Returns the addresses to try.
    async fn check(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        self.config.check_host(host).map_err(|e| e.to_string())?;
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect();
        if addrs.is_empty() {
            return Err(format!("{host} has no address"));
        }
        for addr in &addrs {
            if let Some(why) = network::refused(host, *addr) {
                return Err(why);
            }
        }
        Ok(addrs)
    }
}

/// Why the rules refuse a page at `url` once its host is resolved, if they
/// do: what [`crate::BrowserConfig::check_url`] cannot tell without a
/// lookup (a name that resolves into a `[network]` range, or to a private
/// address on a shared server). The proxy refuses such a page with a 403 of
/// its own, which Chromium shows as a page; a navigation asks here so that
/// it fails rather than return that page.
pub(crate) async fn refused_after_lookup(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    network::refused_destination(host, parsed.port_or_known_default()?).await
}

/// One client connection: read its first request head, check it, and relay.
async fn relay(mut client: TcpStream, rules: &Rules) -> std::io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (method, target, version) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or("HTTP/1.1"),
    );
    if method.eq_ignore_ascii_case("CONNECT") {
        let Some((host, port)) = split_authority(target, 443) else {
            return refuse(&mut client, &format!("{target:?} is not host:port")).await;
        };
        let Some(mut upstream) = upstream(&mut client, rules, &host, port).await? else {
            return Ok(());
        };
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        upstream.write_all(&rest).await?;
        tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
        return Ok(());
    }
    let Ok(url) = url::Url::parse(target) else {
        return refuse(&mut client, &format!("{target:?} is not an absolute URL")).await;
    };
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return refuse(&mut client, &format!("{target:?} has no host")).await;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let Some(mut upstream) = upstream(&mut client, rules, &host, port).await? else {
        return Ok(());
    };
    // The request in origin form, on a connection of its own (so that a
    // second request on the same client connection is checked too).
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if [
            "connection",
            "proxy-connection",
            "keep-alive",
            "proxy-authorization",
        ]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
        {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    upstream.write_all(out.as_bytes()).await?;
    upstream.write_all(&rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// The request head (through the blank line) and what was read after it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            buf.truncate(end);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::other("request head too large"));
        }
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// `host:port` (`[::1]:443` too) as the host and the port.
fn split_authority(authority: &str, default_port: u16) -> Option<(String, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default_port,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_string(), port.parse().ok()?)),
        None => Some((authority.to_string(), default_port)),
    }
}

/// The connection to `host:port` for `client`, if the rules allow it; `None`
/// when the client was answered with the refusal instead. An upstream that
/// cannot be reached is an error, and the client's connection is reset as it
/// drops: Chromium reports a connection failure (as it would without the
/// proxy), not a page.
async fn upstream(
    client: &mut TcpStream,
    rules: &Rules,
    host: &str,
    port: u16,
) -> std::io::Result<Option<TcpStream>> {
    let addrs = match rules.check(host, port).await {
        Ok(addrs) => addrs,
        Err(why) => {
            refuse(client, &why).await?;
            return Ok(None);
        }
    };
    match TcpStream::connect(&addrs[..]).await {
        Ok(upstream) => Ok(Some(upstream)),
        Err(e) => {
            let _ = client.set_zero_linger();
            Err(e)
        }
    }
}

async fn refuse(client: &mut TcpStream, why: &str) -> std::io::Result<()> {
    tracing::debug!(why, "browser request refused by the network rules");
    let body = format!("Blocked by Axon: {why}\n");
    let response = format!(
        "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nX-Axon-Blocked: 1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_split_into_host_and_port() {
        assert_eq!(
            split_authority("a.test:8443", 443),
            Some(("a.test".into(), 8443))
        );
        assert_eq!(split_authority("[::1]:80", 443), Some(("::1".into(), 80)));
        assert_eq!(split_authority("a.test", 443), Some(("a.test".into(), 443)));
        assert_eq!(split_authority("a.test:x", 443), None);
    }
}
