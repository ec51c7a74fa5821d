//! How a client learns where to get a token: the Protected Resource Metadata
//! (RFC 9728) at `/.well-known/oauth-protected-resource` (and its
//! path-suffixed form for `/mcp`, whose resource is `<resource>/mcp`), and
//! the `WWW-Authenticate` challenges (RFC 6750 §3) of every 401 and 403 that
//! point at it.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::AppState;
use crate::problem::Problem;

/// The routes a client reads before it has a token: the metadata, and the
/// dashboard's sign-in settings.
pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route("/auth/dashboard.json", get(dashboard))
}

/// `GET /auth/dashboard.json`: the dashboard's client (`signin.js`); 404
/// when a person signs in by pasting a token.
async fn dashboard(State(state): State<Arc<AppState>>) -> Response {
    let Some((idp, signin)) = state
        .idp
        .as_ref()
        .and_then(|idp| Some((idp, idp.dashboard.as_ref()?)))
    else {
        return Problem::not_found(
            "the dashboard signs in with a pasted token ([server.auth.dashboard] is not set)",
        )
        .into_response();
    };
    axum::Json(json!({
        "issuer": signin.issuer,
        "client_id": signin.client_id,
        "scopes": signin.scopes,
        "resource": idp.resource,
    }))
    .into_response()
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`.
async fn protected_resource(State(state): State<Arc<AppState>>, uri: Uri) -> Response {
    let Some(idp) = &state.idp else {
        return Problem::not_found("this server trusts no identity provider ([server.auth])")
            .into_response();
    };
    let suffix = uri
        .path()
        .strip_prefix("/.well-known/oauth-protected-resource")
        .unwrap_or_default();
    let body = json!({
        "resource": format!("{}{suffix}", idp.resource),
        "authorization_servers": idp.issuer_urls(),
        "scopes_supported": idp.scopes(),
        "bearer_methods_supported": ["header"],
        "resource_name": "Axon",
        "resource_documentation": "https://github.com/axon-rs/axon/blob/main/docs/security.md",
    });
    axum::Json(body).into_response()
}

/// Where the metadata of the resource a request is for lives: `/mcp`'s own
/// for `/mcp`, the server's for everything else.
pub(crate) fn metadata_url(resource: &str, path: &str) -> String {
    let suffix = if path == "/mcp" || path.starts_with("/mcp/") {
        "/mcp"
    } else {
        ""
    };
    format!("{resource}/.well-known/oauth-protected-resource{suffix}")
}

/// The challenge of a 401 or 403: `error` (`invalid_token`,
/// `insufficient_scope`) with its description or the scope needed, and
/// always where the metadata is.
pub(crate) fn challenge(
    metadata: &str,
    error: Option<&str>,
    description: Option<&str>,
    scope: &[String],
) -> HeaderValue {
    let mut params = Vec::new();
    if let Some(error) = error {
        params.push(format!("error=\"{}\"", quoted(error)));
    }
    if let Some(description) = description {
        params.push(format!("error_description=\"{}\"", quoted(description)));
    }
    if !scope.is_empty() {
        params.push(format!("scope=\"{}\"", quoted(&scope.join(" "))));
    }
    params.push(format!("resource_metadata=\"{}\"", quoted(metadata)));
    let value = format!("Bearer {}", params.join(", "));
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
}

/// A quoted-string's content: no quote, backslash or control character
/// (RFC 6750 forbids them in these parameters; none of ours has one).
fn quoted(value: &str) -> String {
    value
        .chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_endpoint_has_its_own_metadata() {
        let base = "https://axon.example";
        assert_eq!(
            metadata_url(base, "/mcp"),
            "https://axon.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url(base, "/v1/tools"),
            "https://axon.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            metadata_url(base, "/mcpx"),
            "https://axon.example/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn a_challenge_names_the_error_the_scope_and_the_metadata() {
        let value = challenge(
            "https://a/.well-known/oauth-protected-resource",
            Some("insufficient_scope"),
            None,
            &["axon:browser".into(), "axon:admin".into()],
        );
        assert_eq!(
            value.to_str().unwrap(),
            "Bearer error=\"insufficient_scope\", scope=\"axon:browser axon:admin\", resource_metadata=\"https://a/.well-known/oauth-protected-resource\""
        );
        let sneaky = challenge("m", Some("invalid_token"), Some("a \"b\"\r\n"), &[]);
        assert_eq!(
            sneaky.to_str().unwrap(),
            "Bearer error=\"invalid_token\", error_description=\"a b\", resource_metadata=\"m\""
        );
    }
}
