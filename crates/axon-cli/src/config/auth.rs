//! `[server.auth]`: the identity providers whose access tokens `axon serve`
//! accepts (docs/security.md, "Signing in with an identity provider").
//!
//! ```toml
//! [server.auth]
//! resource = "https://axon.example.com"     # this server's public URL
//!
//! [[server.auth.issuers]]
//! name = "corp"                             # tenants are corp:<sub>
//! issuer = "https://login.example.com"
//! [[server.auth.issuers.grants]]
//! scope = "axon:browser"
//! tools = ["browser_*"]
//! [server.auth.issuers.secrets]
//! "team-*" = ["GITHUB_TOKEN"]
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `[server.auth]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// This server's public URL (scheme, host, port; no path): what its
    /// Protected Resource Metadata names and the audience tokens carry.
    /// Default `http://<bound address>`.
    pub resource: Option<String>,
    /// The trusted issuers.
    pub issuers: Vec<IssuerConfig>,
    /// How a person signs in to the dashboard (default: a pasted token).
    pub dashboard: Option<DashboardConfig>,
}

/// `[server.auth.dashboard]`: the dashboard's public OAuth client, registered
/// with the IdP with the redirect `<resource>/auth/callback`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DashboardConfig {
    /// Its client id.
    pub client_id: String,
    /// The issuer it signs in with; default the first.
    pub issuer: Option<String>,
    /// The scopes it asks for; default every scope a grant names.
    pub scopes: Vec<String>,
}

/// `[[server.auth.issuers]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IssuerConfig {
    /// Its tenants' prefix (`corp` → `corp:alice`): letters, digits, `_`, `-`.
    pub name: String,
    /// The issuer URL, as its tokens' `iss` says (https, or http on loopback).
    pub issuer: String,
    /// Its keys' URL, when discovery should be skipped.
    pub jwks_url: Option<String>,
    /// Audiences accepted; empty: the resource and `<resource>/mcp`.
    pub audiences: Vec<String>,
    /// Signing algorithms accepted (RS256, ES256, EdDSA; never none or HS*).
    pub algorithms: Vec<String>,
    /// How far `exp`/`nbf` may be off, in seconds (60).
    pub clock_skew_s: u64,
    /// The claim naming the tenant (`sub`).
    pub tenant_claim: String,
    /// The claims holding scopes or groups (`scope`, `scp`).
    pub scope_claims: Vec<String>,
    /// How long its keys are trusted before they are fetched again, in
    /// seconds (3600).
    pub keys_ttl_s: u64,
    /// How long a discovery or key fetch may take, in ms (5000).
    pub fetch_timeout_ms: u64,
    /// What each scope or group grants.
    pub grants: Vec<GrantConfig>,
    /// Tenant pattern (without the prefix) → the `[secrets]` its plans may use.
    pub secrets: BTreeMap<String, Vec<String>>,
}

impl Default for IssuerConfig {
    fn default() -> Self {
        IssuerConfig {
            name: "idp".into(),
            issuer: String::new(),
            jwks_url: None,
            audiences: Vec::new(),
            algorithms: vec!["RS256".into(), "ES256".into(), "EdDSA".into()],
            clock_skew_s: 60,
            tenant_claim: "sub".into(),
            scope_claims: vec!["scope".into(), "scp".into()],
            keys_ttl_s: 3600,
            fetch_timeout_ms: 5000,
            grants: Vec::new(),
            secrets: BTreeMap::new(),
        }
    }
}

/// `[[server.auth.issuers.grants]]`: what holding one scope grants.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrantConfig {
    /// The scope (or group) value.
    pub scope: String,
    /// Tools it may see and call (globs); empty: all.
    pub tools: Vec<String>,
    /// Whether it is an admin (approves, accepts pins, sees every tenant).
    pub admin: bool,
}

impl AuthConfig {
    /// The server's options, with `bound` the default resource.
    pub fn options(&self, bound: &std::net::SocketAddr) -> axon_server::IdpOptions {
        let resource = self
            .resource
            .clone()
            .unwrap_or_else(|| format!("http://{bound}"));
        let issuers = self.issuers.iter().map(IssuerConfig::options).collect();
        let dashboard = self.dashboard.as_ref().map(|d| {
            let first = self.issuers.first();
            let scopes = match d.scopes.is_empty() {
                false => d.scopes.clone(),
                true => {
                    let mut all: Vec<String> = Vec::new();
                    for g in self.issuers.iter().flat_map(|i| &i.grants) {
                        if !all.contains(&g.scope) {
                            all.push(g.scope.clone());
                        }
                    }
                    all
                }
            };
            axon_server::DashboardSignIn {
                issuer: d
                    .issuer
                    .clone()
                    .or_else(|| first.map(|i| i.issuer.clone()))
                    .unwrap_or_default(),
                client_id: d.client_id.clone(),
                scopes,
            }
        });
        axon_server::IdpOptions {
            resource: resource.trim_end_matches('/').to_string(),
            issuers,
            dashboard,
        }
    }

    /// Every key checked, named when wrong (`secret_names`: the configured
    /// `[secrets]`).
    pub fn check(&self, secret_names: &[&str]) -> Result<(), ConfigError> {
        if let Some(resource) = &self.resource {
            check_url("server.auth.resource", resource, false)?;
        }
        if let Some(d) = &self.dashboard {
            if d.client_id.trim().is_empty() {
                return Err(ConfigError(
                    "server.auth.dashboard.client_id: name the dashboard's client at the IdP"
                        .into(),
                ));
            }
            let trusted = |url: &str| self.issuers.iter().any(|i| i.issuer == url);
            match &d.issuer {
                Some(url) if !trusted(url) => {
                    return Err(ConfigError(format!(
                        "server.auth.dashboard.issuer: {url:?} is not one of server.auth.issuers"
                    )));
                }
                None if self.issuers.is_empty() => {
                    return Err(ConfigError(
                        "server.auth.dashboard: add the issuer it signs in with to server.auth.issuers".into(),
                    ));
                }
                _ => {}
            }
        }
        let mut names = std::collections::HashSet::new();
        for (i, issuer) in self.issuers.iter().enumerate() {
            let at = format!("server.auth.issuers[{i}]");
            issuer.check(&at, secret_names)?;
            if !names.insert(issuer.name.as_str()) {
                return Err(ConfigError(format!(
                    "{at}.name: {:?} names two issuers (their tenants would meet)",
                    issuer.name
                )));
            }
        }
        Ok(())
    }
}

impl IssuerConfig {
    fn options(&self) -> axon_server::IssuerOptions {
        let mut o = axon_server::IssuerOptions::new(&self.name, &self.issuer);
        o.jwks_url = self.jwks_url.clone();
        o.audiences = self.audiences.clone();
        // Checked already: an unknown name is left out, never accepted.
        o.algorithms = self
            .algorithms
            .iter()
            .filter_map(|a| a.parse().ok())
            .collect();
        o.clock_skew = std::time::Duration::from_secs(self.clock_skew_s);
        o.tenant_claim = self.tenant_claim.clone();
        o.scope_claims = self.scope_claims.clone();
        o.keys_ttl = std::time::Duration::from_secs(self.keys_ttl_s);
        o.fetch_timeout = std::time::Duration::from_millis(self.fetch_timeout_ms.clamp(1, 60_000));
        o.grants = self
            .grants
            .iter()
            .map(|g| axon_server::ScopeGrant {
                scope: g.scope.clone(),
                tools: g.tools.clone(),
                admin: g.admin,
            })
            .collect();
        o.secrets = self
            .secrets
            .iter()
            .map(|(tenant, secrets)| axon_server::TenantSecrets {
                tenant: tenant.clone(),
                secrets: secrets.clone(),
            })
            .collect();
        o
    }

    fn check(&self, at: &str, secret_names: &[&str]) -> Result<(), ConfigError> {
        let fail = |key: &str, why: String| Err(ConfigError(format!("{at}.{key}: {why}")));
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return fail(
                "name",
                format!("{:?} may hold only letters, digits, _ and -", self.name),
            );
        }
        check_url(&format!("{at}.issuer"), &self.issuer, true)?;
        if let Some(url) = &self.jwks_url {
            check_url(&format!("{at}.jwks_url"), url, true)?;
        }
        if self.algorithms.is_empty() {
            return fail(
                "algorithms",
                "name at least one (RS256, ES256, EdDSA, …)".into(),
            );
        }
        for (k, alg) in self.algorithms.iter().enumerate() {
            if let Err(e) = alg.parse::<axon_server::SigningAlgorithm>() {
                return fail(&format!("algorithms[{k}]"), e.to_string());
            }
        }
        if self.tenant_claim.is_empty() {
            return fail(
                "tenant_claim",
                "name the claim that holds the tenant (sub)".into(),
            );
        }
        if self.grants.is_empty() {
            return fail(
                "grants",
                "an issuer without grants lets no token in: add [[…grants]] scope = \"…\"".into(),
            );
        }
        for (k, grant) in self.grants.iter().enumerate() {
            // RFC 6749's scope-token: printable ASCII without space, " or \.
            let scope_token = |c: char| c.is_ascii_graphic() && c != '"' && c != '\\';
            if grant.scope.is_empty() || !grant.scope.chars().all(scope_token) {
                return fail(
                    &format!("grants[{k}].scope"),
                    format!(
                        "{:?} is not a scope (printable, no spaces or quotes)",
                        grant.scope
                    ),
                );
            }
        }
        for (tenant, names) in &self.secrets {
            for (k, name) in names.iter().enumerate() {
                if name != "*" && !secret_names.contains(&name.as_str()) {
                    return fail(
                        &format!("secrets.{tenant:?}[{k}]"),
                        format!(
                            "no secret named {name:?} in [secrets] (grant a configured one, or \"*\" for all)"
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

/// An http(s) URL without query or fragment; `http` only to a loopback
/// host (keys fetched in clear text could be swapped on the way). With
/// `path` false, no path either (a resource is an origin).
fn check_url(key: &str, url: &str, path: bool) -> Result<(), ConfigError> {
    let fail = |why: &str| Err(ConfigError(format!("{key}: {url:?} {why}")));
    let Some((scheme, rest)) = url.split_once("://") else {
        return fail("is not an http(s) URL");
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    if host.is_empty() {
        return fail("names no host");
    }
    if url.contains(['?', '#']) {
        return fail("may not carry a query or fragment");
    }
    if !path && !tail.trim_end_matches('/').is_empty() {
        return fail("must be an origin (scheme, host, port), without a path");
    }
    let loopback = matches!(host, "localhost" | "127.0.0.1" | "::1") || host.starts_with("127.");
    match scheme {
        "https" => Ok(()),
        "http" if loopback || !path => Ok(()),
        "http" => fail(
            "must be https (http only on loopback): keys fetched in clear text could be swapped",
        ),
        _ => fail("is not an http(s) URL"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml: &str) -> Result<(), ConfigError> {
        let config: AuthConfig = toml::from_str(toml).map_err(|e| ConfigError(e.to_string()))?;
        config.check(&["GH"])
    }

    #[test]
    fn a_wrong_key_is_named() {
        let ok = "[[issuers]]\nissuer = \"https://login.example\"\n[[issuers.grants]]\nscope = \"axon:tools\"\n";
        assert!(parse(ok).is_ok());
        let cases = [
            (
                "issuer = \"http://login.example\"",
                "issuers[0].issuer",
                "must be https",
            ),
            (
                "issuer = \"ftp://x\"",
                "issuers[0].issuer",
                "not an http(s) URL",
            ),
            (
                "algorithms = [\"HS256\"]",
                "issuers[0].algorithms[0]",
                "never none or HS*",
            ),
            (
                "algorithms = [\"none\"]",
                "issuers[0].algorithms[0]",
                "not an accepted",
            ),
            ("name = \"a:b\"", "issuers[0].name", "letters, digits"),
            (
                "secrets = { \"*\" = [\"NOPE\"] }",
                "issuers[0].secrets",
                "no secret named \"NOPE\"",
            ),
        ];
        for (line, key, why) in cases {
            let toml = ok.replace("[[issuers.grants]]", &format!("{line}\n[[issuers.grants]]"));
            let toml = if line.starts_with("issuer =") {
                toml.replace("issuer = \"https://login.example\"\n", "")
            } else {
                toml
            };
            let e = parse(&toml).expect_err(line).to_string();
            assert!(e.contains(key) && e.contains(why), "{line}: {e}");
        }
        let no_grants = "[[issuers]]\nissuer = \"https://login.example\"\n";
        assert!(
            parse(no_grants)
                .expect_err("no grants")
                .to_string()
                .contains("grants")
        );
        let bad_scope = ok.replace("axon:tools", "axon tools");
        assert!(
            parse(&bad_scope)
                .expect_err("scope")
                .to_string()
                .contains("grants[0].scope")
        );
        let twice = format!("{ok}{ok}");
        assert!(
            parse(&twice)
                .expect_err("twice")
                .to_string()
                .contains("names two issuers")
        );
        let with_path = format!("resource = \"https://axon.example/x\"\n{ok}");
        assert!(
            parse(&with_path)
                .expect_err("path")
                .to_string()
                .contains("without a path")
        );
        assert!(parse(&ok.replace("https://login.example", "http://127.0.0.1:9400")).is_ok());
    }
}
