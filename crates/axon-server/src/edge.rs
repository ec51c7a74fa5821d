//! Who may reach the server at all, before any token is looked at: a web page
//! the user happens to visit must not be able to drive a local `axon serve`.
//!
//! Three checks on every request (docs/security.md):
//!
//! - **Host** is one of the server's own names ([`ServerOptions::allowed_hosts`]:
//!   the loopback names by default), so a page on a domain that re-resolves to
//!   127.0.0.1 (DNS rebinding) is refused.
//! - **Origin**, when a browser sends one, is the server's own (the dashboard)
//!   or one the operator allowed ([`ServerOptions::allowed_origins`]): a
//!   cross-site `fetch` or form post is refused, `no-cors` or not. `Origin:
//!   null` (sandboxed frames, `file:` pages) is cross-site.
//! - **A body is JSON** (or YAML, for plans): the content types a page can send
//!   without a CORS preflight (`text/plain`, forms) never reach a handler.
//!
//! A request with no Host header comes from no browser (HTTP/1.1 browsers
//! always send one) and is let through; bearer tokens, where configured, are
//! checked after this.
//!
//! [`ServerOptions::allowed_hosts`]: crate::ServerOptions::allowed_hosts
//! [`ServerOptions::allowed_origins`]: crate::ServerOptions::allowed_origins

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::problem::Problem;

/// The Host names a loopback server answers to.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Refuse a request from the wrong Host, a foreign Origin, or with a body
/// that is not JSON or YAML.
pub(crate) async fn guard(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let options = &state.options;
    if let Err(problem) = check(
        request.headers(),
        &options.allowed_hosts,
        &options.allowed_origins,
    ) {
        return problem.into_response();
    }
    next.run(request).await
}

/// The three checks, on a request's headers.
fn check(headers: &HeaderMap, hosts: &[String], origins: &[String]) -> Result<(), Problem> {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    if let Some(host) = host
        && !host_allowed(hosts, host)
    {
        return Err(forbidden(
            "host not allowed",
            format!(
                "Host {host:?} is not a name of this server (server.allowed_hosts); a page on another domain cannot reach it"
            ),
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("null");
        if !origin_allowed(origins, origin, host) {
            return Err(forbidden(
                "origin not allowed",
                format!(
                    "Origin {origin:?} is not this server's and not in server.allowed_origins: cross-site requests are refused"
                ),
            ));
        }
    }
    if has_body(headers) {
        let kind = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !body_type_allowed(kind) {
            return Err(Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported media type",
                format!(
                    "a request body must be application/json (or application/yaml for plans), not {:?}",
                    if kind.is_empty() { "none" } else { kind }
                ),
            ));
        }
    }
    Ok(())
}

fn forbidden(title: &'static str, detail: String) -> Problem {
    Problem::new(StatusCode::FORBIDDEN, title, detail)
}

/// The host part of a Host header or an origin's authority (`[::1]:7878` →
/// `[::1]`, `Example.COM.` → `example.com`).
fn host_part(authority: &str) -> String {
    let host = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((inside, _)) => format!("[{inside}]"),
            None => authority.to_string(),
        },
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host)
            .to_string(),
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether `host` (a Host header) is allowed: `*` allows any, else the host
/// part (without the port) matches one of the patterns.
fn host_allowed(patterns: &[String], host: &str) -> bool {
    patterns.iter().any(|p| p == "*") || axon_core::hosts::matches_any(patterns, &host_part(host))
}

/// Whether `origin` may call: the server's own origin (its authority is the
/// request's Host), or one the operator listed (exact, ignoring case and a
/// trailing slash).
fn origin_allowed(allowed: &[String], origin: &str, host: Option<&str>) -> bool {
    let origin = origin.trim_end_matches('/');
    if allowed
        .iter()
        .any(|a| a == "*" || a.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false; // `null`, or not an origin at all
    };
    matches!(scheme, "http" | "https")
        && host.is_some_and(|host| authority.eq_ignore_ascii_case(host))
}

fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// JSON (`application/json`, `application/*+json`) or YAML.
fn body_type_allowed(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    matches!(
        essence.as_str(),
        "application/json"
            | "application/yaml"
            | "application/x-yaml"
            | "text/yaml"
            | "text/x-yaml"
    ) || (essence.starts_with("application/") && essence.ends_with("+json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn loopback() -> Vec<String> {
        LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn status(pairs: &[(&'static str, &str)]) -> Option<StatusCode> {
        check(&headers(pairs), &loopback(), &[])
            .err()
            .map(|p| p.status())
    }

    #[test]
    fn a_rebound_host_is_refused() {
        assert_eq!(
            status(&[("host", "evil.example:7878")]),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(&[("host", "127.0.0.1.evil.example")]),
            Some(StatusCode::FORBIDDEN)
        );
        for ok in ["127.0.0.1:7878", "localhost", "LOCALHOST.:1", "[::1]:7878"] {
            assert_eq!(status(&[("host", ok)]), None, "{ok}");
        }
        assert!(host_allowed(&["*".into()], "anything.example"));
    }

    #[test]
    fn a_cross_site_origin_is_refused_and_the_own_one_is_not() {
        let host = ("host", "127.0.0.1:7878");
        assert_eq!(
            status(&[host, ("origin", "http://evil.example")]),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(&[host, ("origin", "null")]),
            Some(StatusCode::FORBIDDEN)
        );
        // Another port of the same host is another origin.
        assert_eq!(
            status(&[host, ("origin", "http://127.0.0.1:9999")]),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(status(&[host, ("origin", "http://127.0.0.1:7878")]), None);
        let allowed = vec!["https://app.example/".to_string()];
        assert!(
            check(
                &headers(&[host, ("origin", "https://APP.example")]),
                &loopback(),
                &allowed
            )
            .is_ok()
        );
    }

    #[test]
    fn a_body_that_a_page_can_send_without_preflight_is_refused() {
        let host = ("host", "127.0.0.1:7878");
        for simple in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "",
        ] {
            let mut h = vec![host, ("content-length", "2")];
            if !simple.is_empty() {
                h.push(("content-type", simple));
            }
            assert_eq!(
                status(&h),
                Some(StatusCode::UNSUPPORTED_MEDIA_TYPE),
                "{simple}"
            );
        }
        for fine in [
            "application/json",
            "application/json; charset=utf-8",
            "application/yaml",
            "application/merge-patch+json",
        ] {
            assert_eq!(
                status(&[host, ("content-length", "2"), ("content-type", fine)]),
                None,
                "{fine}"
            );
        }
        // No body, no type needed (the dashboard's POSTs).
        assert_eq!(status(&[host, ("content-length", "0")]), None);
    }
}
