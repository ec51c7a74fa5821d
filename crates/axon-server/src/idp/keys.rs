//! One issuer's signing keys: found through its discovery document (or a
//! configured JWKS URL), cached for a TTL, fetched again when a token names a
//! key id the cache does not hold (at most once a second, the requests
//! waiting for that turn: a stream of made-up `kid`s neither turns the
//! server into a load on the IdP nor keeps a rotated key out).
//!
//! An issuer that is down, slow or answering garbage never lets a token in:
//! the keys fetched before stay in use (a rotation is picked up when it
//! answers again), and with no keys at all the request is refused with 503
//! naming the issuer. Every fetch is bounded in time and size.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

/// The least time between two fetches asked for by unknown key ids.
const UNKNOWN_KID_INTERVAL: Duration = Duration::from_secs(1);

/// The largest discovery document or JWKS read (1 MiB).
const BODY_LIMIT: usize = 1 << 20;

/// One verification key and the algorithm its JWK pins, if any.
pub(crate) struct Key {
    pub(crate) key: DecodingKey,
    pub(crate) alg: Option<Algorithm>,
}

/// Why no key could be had for a token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    /// The issuer publishes no key with this id (after asking it again).
    #[error("the issuer publishes no signing key {0:?}")]
    Unknown(String),
    /// No key was ever fetched: the issuer could not be reached or answered
    /// something that is not a key set.
    #[error("the signing keys of {issuer} could not be fetched: {why}")]
    Unavailable { issuer: String, why: String },
}

#[derive(Default)]
struct Cached {
    /// Keys by `kid`; a key without one is kept under "".
    keys: HashMap<String, Arc<Key>>,
    fetched: Option<Instant>,
    last_attempt: Option<Instant>,
    /// The last fetch asked for by a key id the cache did not hold.
    last_unknown: Option<Instant>,
    last_error: Option<String>,
}

struct Look {
    key: Option<Arc<Key>>,
    fresh: bool,
    ever_fetched: bool,
    may_ask: bool,
    /// How long until an unknown key id may ask the issuer again.
    unknown_wait: Option<Duration>,
}

/// The keys of one issuer.
pub(crate) struct Keys {
    issuer: String,
    jwks_url: Option<String>,
    ttl: Duration,
    refetch_interval: Duration,
    http: reqwest::Client,
    cached: RwLock<Cached>,
    /// One fetch at a time: the requests that wait for it read its result.
    fetching: tokio::sync::Mutex<()>,
}

impl Keys {
    pub(crate) fn new(
        issuer: &str,
        jwks_url: Option<&str>,
        ttl: Duration,
        timeout: Duration,
    ) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Keys {
            issuer: issuer.trim_end_matches('/').to_string(),
            jwks_url: jwks_url.map(str::to_string),
            ttl,
            refetch_interval: Duration::from_secs(10).min(ttl),
            http,
            cached: RwLock::new(Cached::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The key `kid` names (a token without `kid` gets the issuer's only
    /// key, or the one published without an id).
    pub(crate) async fn get(&self, kid: Option<&str>) -> Result<Arc<Key>, KeyError> {
        let look = self.look(kid);
        match look.key {
            // A stale key is used while the issuer was asked lately: an
            // issuer that is down costs each request nothing.
            Some(key) if look.fresh || !look.may_ask => return Ok(key),
            Some(_) => self.refresh(false).await,
            // A key id never seen: the issuer may have rotated. It is asked
            // at most once per UNKNOWN_KID_INTERVAL, and a request waits for
            // that turn rather than fail: made-up ids cost the issuer one
            // fetch a second and cannot keep a new key out.
            None if look.ever_fetched => {
                if let Some(wait) = look.unknown_wait {
                    tokio::time::sleep(wait).await;
                }
                self.refresh(true).await
            }
            None if look.may_ask => self.refresh(false).await,
            None => return self.unknown(kid),
        }
        match self.look(kid).key {
            Some(key) => Ok(key),
            None => self.unknown(kid),
        }
    }

    /// Whether the key `kid` names is still among those fetched last (a key
    /// the issuer stopped publishing is not).
    pub(crate) fn holds(&self, kid: Option<&str>) -> bool {
        self.look(kid).key.is_some()
    }

    /// What the cache holds for `kid`, and whether the issuer may be asked.
    fn look(&self, kid: Option<&str>) -> Look {
        let cached = self.cached.read().unwrap_or_else(|e| e.into_inner());
        let key = match kid {
            Some(kid) => cached.keys.get(kid).cloned(),
            None if cached.keys.len() == 1 => cached.keys.values().next().cloned(),
            None => cached.keys.get("").cloned(),
        };
        Look {
            key,
            fresh: cached.fetched.is_some_and(|at| at.elapsed() < self.ttl),
            ever_fetched: cached.fetched.is_some(),
            may_ask: cached
                .last_attempt
                .is_none_or(|at| at.elapsed() >= self.refetch_interval),
            unknown_wait: cached
                .last_unknown
                .and_then(|at| UNKNOWN_KID_INTERVAL.checked_sub(at.elapsed()))
                .filter(|wait| !wait.is_zero()),
        }
    }

    fn unknown(&self, kid: Option<&str>) -> Result<Arc<Key>, KeyError> {
        let cached = self.cached.read().unwrap_or_else(|e| e.into_inner());
        match (&cached.fetched, &cached.last_error) {
            (None, Some(why)) => Err(KeyError::Unavailable {
                issuer: self.issuer.clone(),
                why: why.clone(),
            }),
            _ => Err(KeyError::Unknown(kid.unwrap_or_default().to_string())),
        }
    }

    /// Fetch the keys now, keeping nothing: how many are usable.
    pub(crate) async fn probe(&self) -> Result<usize, String> {
        self.fetch().await.map(|keys| keys.len())
    }

    /// Fetch the key set once for everyone waiting; on failure keep the
    /// keys held before. `unknown`: asked for by a key id not held.
    async fn refresh(&self, unknown: bool) {
        let started = Instant::now();
        let _one = self.fetching.lock().await;
        {
            let cached = self.cached.read().unwrap_or_else(|e| e.into_inner());
            if cached.last_attempt.is_some_and(|at| at >= started) {
                return; // fetched while this request waited
            }
            if unknown
                && cached
                    .last_unknown
                    .is_some_and(|at| at.elapsed() < UNKNOWN_KID_INTERVAL)
            {
                return; // another unknown id had this turn
            }
        }
        let result = self.fetch().await;
        let mut cached = self.cached.write().unwrap_or_else(|e| e.into_inner());
        cached.last_attempt = Some(Instant::now());
        if unknown {
            cached.last_unknown = cached.last_attempt;
        }
        match result {
            Ok(keys) => {
                cached.keys = keys;
                cached.fetched = Some(Instant::now());
                cached.last_error = None;
            }
            Err(why) => {
                tracing::warn!(issuer = %self.issuer, %why, "identity provider keys not refreshed; the keys held before stay in use");
                cached.last_error = Some(why);
            }
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, Arc<Key>>, String> {
        let jwks_url = match &self.jwks_url {
            Some(url) => url.clone(),
            None => self.discover().await?,
        };
        let set: serde_json::Value = self.get_json(&jwks_url).await?;
        let keys = set
            .get("keys")
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| format!("{jwks_url} is not a JWK set (no \"keys\" array)"))?;
        let mut usable = HashMap::new();
        for value in keys {
            // One key this crate cannot read (another curve, an encryption
            // key) does not hide the others.
            let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else {
                continue;
            };
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
                continue;
            }
            let Ok(key) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            let alg = jwk.common.key_algorithm.and_then(signing_algorithm);
            let kid = jwk.common.key_id.clone().unwrap_or_default();
            usable.insert(kid, Arc::new(Key { key, alg }));
        }
        if usable.is_empty() {
            return Err(format!("{jwks_url} holds no signing key Axon can use"));
        }
        Ok(usable)
    }

    /// `jwks_uri` from the issuer's metadata: OpenID Connect discovery, else
    /// RFC 8414's authorization server metadata. The document must name
    /// this issuer (a mix-up is refused).
    async fn discover(&self) -> Result<String, String> {
        let mut last = String::new();
        for path in [
            "/.well-known/openid-configuration",
            "/.well-known/oauth-authorization-server",
        ] {
            let url = format!("{}{path}", self.issuer);
            match self.get_json(&url).await {
                Ok(doc) => {
                    let named = doc.get("issuer").and_then(serde_json::Value::as_str);
                    if named.map(|s| s.trim_end_matches('/')) != Some(self.issuer.as_str()) {
                        return Err(format!(
                            "{url} names the issuer {named:?}, not {:?}",
                            self.issuer
                        ));
                    }
                    return doc
                        .get("jwks_uri")
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_string)
                        .ok_or_else(|| format!("{url} has no jwks_uri"));
                }
                Err(why) => last = why,
            }
        }
        Err(last)
    }

    async fn get_json(&self, url: &str) -> Result<serde_json::Value, String> {
        let mut response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("GET {url}: {}", without_url(&e)))?;
        if !response.status().is_success() {
            return Err(format!("GET {url}: HTTP {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("GET {url}: {}", without_url(&e)))?
        {
            if body.len() + chunk.len() > BODY_LIMIT {
                return Err(format!("GET {url}: more than {BODY_LIMIT} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not JSON ({e})"))
    }
}

/// reqwest's error without the URL it repeats.
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    format!(
        "{kind} ({})",
        std::error::Error::source(e).map_or_else(|| e.to_string(), |s| s.to_string())
    )
}

/// The signing algorithm a JWK's `alg` names (an encryption algorithm: none).
fn signing_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        KeyAlgorithm::HS256 => Algorithm::HS256,
        KeyAlgorithm::HS384 => Algorithm::HS384,
        KeyAlgorithm::HS512 => Algorithm::HS512,
        _ => return None,
    })
}
