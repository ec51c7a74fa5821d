//! Signing in through the company's identity provider: `axon serve` as an
//! OAuth 2.1 resource server (the MCP specification's authorization section).
//!
//! A bearer that is not one of the static tokens is read as a JWT access
//! token from one of the trusted issuers (`[server.auth]`): signed with one of
//! the issuer's published keys (`keys.rs`) in an algorithm the operator
//! allowed (never `none`, never a shared-secret HMAC), for this server (its
//! `aud`), unexpired. Its claims become Axon's model ([`Principal`]): one
//! claim names the tenant, its scopes (or groups) pick the grants that say
//! which tools it may call and whether it is an admin; which secrets a
//! tenant may use is granted by tenant pattern (`Secrets`).
//!
//! A request without a token is answered 401 with `WWW-Authenticate` pointing
//! at the Protected Resource Metadata (RFC 9728, `metadata.rs`), from which an
//! MCP client finds the issuer and asks it for a token for this resource.

mod keys;
pub(crate) mod metadata;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use keys::{KeyError, Keys};

/// `[server.auth]`: the issuers whose tokens this server accepts.
#[derive(Clone, Debug, Default)]
pub struct IdpOptions {
    /// This server's public URL (`https://axon.example.com`): the resource
    /// its metadata names, and the audience tokens must carry (it or
    /// `<resource>/mcp`) unless an issuer says otherwise.
    pub resource: String,
    /// The trusted issuers; none: only the static tokens.
    pub issuers: Vec<IssuerOptions>,
    /// How a person signs in to the dashboard (`None`: by pasting a token).
    pub dashboard: Option<DashboardSignIn>,
}

/// The dashboard's OAuth client (`[server.auth.dashboard]`): a public client
/// registered with the IdP, redirect `<resource>/auth/callback`, that signs a
/// person in with the authorization code flow and PKCE in the browser.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DashboardSignIn {
    /// The issuer it signs in with (one of `issuers`).
    pub issuer: String,
    /// Its client id at that issuer.
    pub client_id: String,
    /// The scopes it asks for.
    pub scopes: Vec<String>,
}

/// One trusted issuer (`[[server.auth.issuers]]`).
#[derive(Clone, Debug)]
pub struct IssuerOptions {
    /// A short name: the prefix of its tenants (`corp:alice`), so that two
    /// issuers' subjects, and the static tokens' tenants, never meet.
    pub name: String,
    /// The issuer URL, exactly as its tokens' `iss` says.
    pub issuer: String,
    /// Where its keys are (skips discovery through
    /// `/.well-known/openid-configuration`).
    pub jwks_url: Option<String>,
    /// Audiences accepted; empty: the server's resource and `<resource>/mcp`.
    pub audiences: Vec<String>,
    /// Algorithms accepted (RS256, ES256 and EdDSA by default).
    pub algorithms: Vec<SigningAlgorithm>,
    /// How far `exp` and `nbf` may be off.
    pub clock_skew: Duration,
    /// The claim naming the tenant (`sub`; an org or group claim).
    pub tenant_claim: String,
    /// The claims holding scopes or groups: a space-separated string
    /// (`scope`) or an array (`scp`, `groups`).
    pub scope_claims: Vec<String>,
    /// What each scope or group grants; a token matching none is refused
    /// (403, naming the scopes that would do).
    pub grants: Vec<ScopeGrant>,
    /// The secrets each tenant may use, by tenant pattern (without the
    /// issuer's prefix: `team-*`).
    pub secrets: Vec<TenantSecrets>,
    /// How long fetched keys are trusted before they are fetched again.
    pub keys_ttl: Duration,
    /// How long a discovery or key fetch may take.
    pub fetch_timeout: Duration,
}

impl IssuerOptions {
    /// An issuer with the defaults: tenant from `sub`, scopes from `scope`
    /// and `scp`, RS256/ES256/EdDSA, one minute of skew, keys kept an hour.
    pub fn new(name: &str, issuer: &str) -> Self {
        IssuerOptions {
            name: name.to_string(),
            issuer: issuer.to_string(),
            jwks_url: None,
            audiences: Vec::new(),
            algorithms: vec![
                SigningAlgorithm::RS256,
                SigningAlgorithm::ES256,
                SigningAlgorithm::EdDSA,
            ],
            clock_skew: Duration::from_secs(60),
            tenant_claim: "sub".into(),
            scope_claims: vec!["scope".into(), "scp".into()],
            grants: Vec::new(),
            secrets: Vec::new(),
            keys_ttl: Duration::from_secs(3600),
            fetch_timeout: Duration::from_secs(5),
        }
    }
}

/// What holding one scope (or group) grants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScopeGrant {
    /// The scope or group value (`axon:browser`).
    pub scope: String,
    /// Tools it may see and call (globs, as `[[server.tokens]]`); empty: all.
    pub tools: Vec<String>,
    /// Whether it may approve, accept pins, reset breakers and see every
    /// tenant's runs and history (the process's owner).
    pub admin: bool,
}

/// The secrets the tenants matching a pattern may use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TenantSecrets {
    /// A tenant pattern (`team-*`, `*`), the claim's value without prefix.
    pub tenant: String,
    /// Secret names (`*`: all).
    pub secrets: Vec<String>,
}

/// The asymmetric JWS algorithms an issuer may be trusted with. There is no
/// `none` and no HMAC: a resource server holds no secret shared with the
/// IdP, and an HMAC keyed with a public key is the classic forgery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum SigningAlgorithm {
    RS256,
    RS384,
    RS512,
    PS256,
    PS384,
    PS512,
    ES256,
    ES384,
    EdDSA,
}

/// An algorithm name Axon does not accept.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0:?} is not an accepted signing algorithm (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA; never none or HS*)"
)]
pub struct UnknownAlgorithm(pub String);

impl std::str::FromStr for SigningAlgorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        use SigningAlgorithm::*;
        Ok(match s {
            "RS256" => RS256,
            "RS384" => RS384,
            "RS512" => RS512,
            "PS256" => PS256,
            "PS384" => PS384,
            "PS512" => PS512,
            "ES256" => ES256,
            "ES384" => ES384,
            "EdDSA" => EdDSA,
            other => return Err(UnknownAlgorithm(other.to_string())),
        })
    }
}

impl SigningAlgorithm {
    fn jws(self) -> Algorithm {
        use SigningAlgorithm::*;
        match self {
            RS256 => Algorithm::RS256,
            RS384 => Algorithm::RS384,
            RS512 => Algorithm::RS512,
            PS256 => Algorithm::PS256,
            PS384 => Algorithm::PS384,
            PS512 => Algorithm::PS512,
            ES256 => Algorithm::ES256,
            ES384 => Algorithm::ES384,
            EdDSA => Algorithm::EdDSA,
        }
    }
}

/// Who a verified token speaks for, in Axon's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Principal {
    /// The issuer (its index in `[server.auth] issuers`).
    pub(crate) issuer: usize,
    /// `<issuer name>:<claim value>`.
    pub(crate) tenant: String,
    /// Tools it may call (globs); empty: every tool.
    pub(crate) tools: Vec<String>,
    pub(crate) admin: bool,
}

/// Why a bearer was not let in.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// 401 `invalid_token`: not a token of a trusted issuer for this server.
    Invalid(String),
    /// 403 `insufficient_scope`: a good token granting nothing here; the
    /// scopes that would.
    Scope(Vec<String>),
    /// 503: the issuer's keys cannot be had, so the token cannot be checked.
    Unavailable(String),
}

/// The trusted issuers, with their keys.
pub(crate) struct Idp {
    pub(crate) resource: String,
    issuers: Vec<Issuer>,
    pub(crate) dashboard: Option<DashboardSignIn>,
    /// Tokens verified before, by the SHA-256 of their bytes (never the
    /// token): an agent sends one token on every call, and its signature
    /// need not be checked each time (ES256 and EdDSA cost 50 µs and more).
    /// An entry counts only while its token is unexpired and the key that
    /// signed it is still published; at most [`VERIFIED_MAX`] are kept.
    verified: Mutex<HashMap<[u8; 32], Verified>>,
}

/// One token verified before.
struct Verified {
    principal: Principal,
    /// Its `exp`, plus the issuer's clock skew (seconds since the epoch).
    until: u64,
    kid: Option<String>,
}

/// The most verified tokens remembered.
const VERIFIED_MAX: usize = 4096;

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Shown as its resource and issuers (keys are not for logs).
impl std::fmt::Debug for Idp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idp")
            .field("resource", &self.resource)
            .field("issuers", &self.issuer_urls())
            .finish()
    }
}

struct Issuer {
    options: IssuerOptions,
    keys: Keys,
    audiences: Vec<String>,
}

/// The longest tenant claim value taken (longer is refused, not cut).
const TENANT_MAX: usize = 256;

/// Why an issuer's keys could not be had (`axon config check`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct IssuerUnreachable(String);

/// Fetch `options`' keys now, as the first request would: how many usable
/// keys it publishes.
pub async fn probe_issuer(options: &IssuerOptions) -> Result<usize, IssuerUnreachable> {
    let keys = Keys::new(
        &options.issuer,
        options.jwks_url.as_deref(),
        options.keys_ttl,
        options.fetch_timeout,
    );
    keys.probe().await.map_err(IssuerUnreachable)
}

impl Idp {
    /// `None` without issuers.
    pub(crate) fn new(options: &IdpOptions) -> Option<Idp> {
        if options.issuers.is_empty() {
            return None;
        }
        let resource = options.resource.trim_end_matches('/').to_string();
        let issuers = options
            .issuers
            .iter()
            .map(|o| Issuer {
                keys: Keys::new(
                    &o.issuer,
                    o.jwks_url.as_deref(),
                    o.keys_ttl,
                    o.fetch_timeout,
                ),
                audiences: match o.audiences.is_empty() {
                    true => vec![resource.clone(), format!("{resource}/mcp")],
                    false => o.audiences.clone(),
                },
                options: o.clone(),
            })
            .collect();
        Some(Idp {
            resource,
            issuers,
            dashboard: options.dashboard.clone(),
            verified: Mutex::new(HashMap::new()),
        })
    }

    /// The scope values any issuer grants something for (the metadata's
    /// `scopes_supported`).
    pub(crate) fn scopes(&self) -> Vec<String> {
        let set: BTreeSet<&str> = self
            .issuers
            .iter()
            .flat_map(|i| i.options.grants.iter().map(|g| g.scope.as_str()))
            .collect();
        set.into_iter().map(str::to_string).collect()
    }

    /// The scopes of the grants that are not admin: what a bare 401 asks a
    /// client to request (the MCP SDKs ask for every scope the metadata
    /// lists otherwise, admin included: least privilege by default).
    pub(crate) fn base_scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = Vec::new();
        for grant in self.issuers.iter().flat_map(|i| &i.options.grants) {
            if !grant.admin && !scopes.contains(&grant.scope) {
                scopes.push(grant.scope.clone());
            }
        }
        scopes
    }

    /// The issuer URLs (the metadata's `authorization_servers`).
    pub(crate) fn issuer_urls(&self) -> Vec<String> {
        self.issuers
            .iter()
            .map(|i| i.options.issuer.clone())
            .collect()
    }

    /// The scopes of `issuer` whose grant lets a caller call `tool` (or,
    /// with `tool` `None`, makes it an admin).
    pub(crate) fn scopes_for(&self, issuer: usize, tool: Option<&str>) -> Vec<String> {
        let Some(issuer) = self.issuers.get(issuer) else {
            return Vec::new();
        };
        issuer
            .options
            .grants
            .iter()
            .filter(|g| match tool {
                Some(tool) => {
                    g.tools.is_empty() || g.tools.iter().any(|p| axon_core::glob::matches(p, tool))
                }
                None => g.admin,
            })
            .map(|g| g.scope.clone())
            .collect()
    }

    /// Verify `token` and map its claims (or find it verified before).
    pub(crate) async fn verify(&self, token: &str) -> Result<Principal, Refusal> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(principal) = self.verified_before(&digest) {
            return Ok(principal);
        }
        let (principal, kid, exp) = self.check(token).await?;
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= VERIFIED_MAX {
            let now = now_secs();
            verified.retain(|_, v| v.until >= now);
            if verified.len() >= VERIFIED_MAX {
                verified.clear();
            }
        }
        let skew = self
            .issuers
            .get(principal.issuer)
            .map_or(0, |i| i.options.clock_skew.as_secs());
        verified.insert(
            digest,
            Verified {
                principal: principal.clone(),
                until: exp.saturating_add(skew),
                kid,
            },
        );
        Ok(principal)
    }

    /// The principal of a token verified before, while it is unexpired and
    /// its key still published.
    fn verified_before(&self, digest: &[u8; 32]) -> Option<Principal> {
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        let entry = verified.get(digest)?;
        let keys = &self.issuers.get(entry.principal.issuer)?.keys;
        if entry.until < now_secs() || !keys.holds(entry.kid.as_deref()) {
            verified.remove(digest);
            return None;
        }
        Some(entry.principal.clone())
    }

    /// The whole check: the principal, the key id and `exp`.
    async fn check(&self, token: &str) -> Result<(Principal, Option<String>, u64), Refusal> {
        let invalid = |why: &str| Refusal::Invalid(why.to_string());
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid("the bearer is not a signed JWT of an algorithm Axon accepts"))?;
        let iss = unverified_issuer(token).ok_or_else(|| invalid("the token names no issuer"))?;
        let (index, issuer) = self
            .issuers
            .iter()
            .enumerate()
            .find(|(_, i)| same_issuer(&i.options.issuer, &iss))
            .ok_or_else(|| invalid("the token's issuer is not trusted here"))?;
        let options = &issuer.options;
        if !options.algorithms.iter().any(|a| a.jws() == header.alg) {
            return Err(Refusal::Invalid(format!(
                "the algorithm {:?} is not accepted for this issuer",
                header.alg
            )));
        }
        let key = issuer
            .keys
            .get(header.kid.as_deref())
            .await
            .map_err(|e| match e {
                KeyError::Unknown(_) => {
                    invalid("the token is signed with a key its issuer does not publish")
                }
                KeyError::Unavailable { .. } => Refusal::Unavailable(e.to_string()),
            })?;
        if key.alg.is_some_and(|alg| alg != header.alg) {
            return Err(invalid("the token's algorithm is not its key's"));
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = options.clock_skew.as_secs();
        validation.validate_nbf = true;
        validation.set_audience(&issuer.audiences);
        validation.set_issuer(&[iss.as_str()]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let claims = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation)
            .map_err(|e| Refusal::Invalid(why_invalid(&e).to_string()))?
            .claims;
        // Checked present and unexpired by the decode above.
        let exp = claims
            .get("exp")
            .and_then(Value::as_f64)
            .unwrap_or_default() as u64;
        let principal = self.principal(index, options, &claims)?;
        Ok((principal, header.kid, exp))
    }

    fn principal(
        &self,
        index: usize,
        options: &IssuerOptions,
        claims: &Map<String, Value>,
    ) -> Result<Principal, Refusal> {
        let tenant = claims
            .get(&options.tenant_claim)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty() && v.len() <= TENANT_MAX && !v.chars().any(char::is_control))
            .ok_or_else(|| {
                Refusal::Invalid(format!(
                    "the token's {:?} claim (its tenant) is missing or not a short string",
                    options.tenant_claim
                ))
            })?;
        let held: HashSet<&str> = options
            .scope_claims
            .iter()
            .filter_map(|claim| claims.get(claim))
            .flat_map(|value| match value {
                Value::String(s) => s.split_whitespace().collect::<Vec<_>>(),
                Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            })
            .collect();
        let granted: Vec<&ScopeGrant> = options
            .grants
            .iter()
            .filter(|g| held.contains(g.scope.as_str()))
            .collect();
        if granted.is_empty() {
            return Err(Refusal::Scope(
                options.grants.iter().map(|g| g.scope.clone()).collect(),
            ));
        }
        let every_tool = granted
            .iter()
            .any(|g| g.tools.is_empty() || g.tools.iter().any(|t| t == "*"));
        let mut tools: Vec<String> = match every_tool {
            true => Vec::new(),
            false => granted
                .iter()
                .flat_map(|g| g.tools.iter().cloned())
                .collect(),
        };
        tools.sort();
        tools.dedup();
        Ok(Principal {
            issuer: index,
            tenant: format!("{}:{tenant}", options.name),
            tools,
            admin: granted.iter().any(|g| g.admin),
        })
    }

    /// Each issuer's secret grants, as `Secrets` takes them: tenant patterns
    /// with the issuer's prefix.
    pub(crate) fn secret_grants(&self) -> impl Iterator<Item = (String, &[String])> + '_ {
        self.issuers.iter().flat_map(|i| {
            i.options.secrets.iter().map(|s| {
                (
                    format!("{}:{}", i.options.name, s.tenant),
                    s.secrets.as_slice(),
                )
            })
        })
    }
}

/// The `iss` claim, read before the signature is checked: only to pick
/// whose keys check it (the verified claims must name the same issuer).
fn unverified_issuer(token: &str) -> Option<String> {
    let mut validation = Validation::new(Algorithm::RS256);
    validation.insecure_disable_signature_validation();
    validation.validate_exp = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    let key = jsonwebtoken::DecodingKey::from_secret(&[]);
    let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation).ok()?;
    data.claims.get("iss")?.as_str().map(str::to_string)
}

fn same_issuer(configured: &str, claimed: &str) -> bool {
    configured.trim_end_matches('/') == claimed.trim_end_matches('/')
}

/// What a client is told about a token refused (never the token).
fn why_invalid(e: &jsonwebtoken::errors::Error) -> &'static str {
    use jsonwebtoken::errors::ErrorKind::*;
    match e.kind() {
        ExpiredSignature => "the token has expired",
        ImmatureSignature => "the token is not valid yet (nbf)",
        InvalidAudience => "the token is not for this server (its aud)",
        InvalidIssuer => "the token's issuer is not trusted here",
        InvalidSignature => "the token's signature does not verify",
        InvalidAlgorithm => "the token's algorithm does not fit its key",
        MissingRequiredClaim(_) => "the token lacks exp, iss or aud",
        _ => "the token could not be verified",
    }
}

#[cfg(test)]
mod tests;
