//! The verifier against an issuer served on loopback, with keys made here
//! (Ed25519 and P-256 by `ring`). The real provider (`oidc-provider`) and the
//! attacks over HTTP are in `tests/idp.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use jsonwebtoken::{EncodingKey, Header};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::{Value, json};

use super::*;

/// A key pair the tests sign with, and its public JWK.
struct TestKey {
    kid: String,
    alg: jsonwebtoken::Algorithm,
    encoding: EncodingKey,
    jwk: Value,
}

fn ed25519(kid: &str) -> TestKey {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("ed25519 key");
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("ed25519 pair");
    TestKey {
        kid: kid.into(),
        alg: jsonwebtoken::Algorithm::EdDSA,
        encoding: EncodingKey::from_ed_der(pkcs8.as_ref()),
        jwk: json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "use": "sig",
                    "x": B64.encode(pair.public_key().as_ref())}),
    }
}

fn p256(kid: &str) -> TestKey {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("p256");
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
        .expect("p256 pair");
    let point = pair.public_key().as_ref(); // 0x04 || x || y
    TestKey {
        kid: kid.into(),
        alg: jsonwebtoken::Algorithm::ES256,
        encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
        jwk: json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
                    "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])}),
    }
}

/// An issuer on loopback: discovery, a JWKS the test can change, and a
/// count of key fetches.
struct TestIssuer {
    url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
    server: tokio::task::JoinHandle<()>,
}

async fn issuer(keys: &[&TestKey], hang: bool) -> TestIssuer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let published: Arc<Mutex<Vec<Value>>> =
        Arc::new(Mutex::new(keys.iter().map(|k| k.jwk.clone()).collect()));
    let fetches = Arc::new(AtomicUsize::new(0));
    let (jwks, count, issuer) = (published.clone(), fetches.clone(), url.clone());
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(move || {
                let issuer = issuer.clone();
                async move {
                    axum::Json(json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")}))
                }
            }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || {
                let (jwks, count) = (jwks.clone(), count.clone());
                async move {
                    count.fetch_add(1, Ordering::SeqCst);
                    if hang {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                    let keys = jwks.lock().expect("keys").clone();
                    axum::Json(json!({ "keys": keys }))
                }
            }),
        );
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    TestIssuer {
        url,
        keys: published,
        fetches,
        server,
    }
}

const RESOURCE: &str = "http://127.0.0.1:7878";

fn options(issuer: &TestIssuer) -> IssuerOptions {
    let mut o = IssuerOptions::new("corp", &issuer.url);
    o.fetch_timeout = Duration::from_millis(500);
    o.grants = vec![
        ScopeGrant {
            scope: "axon:browser".into(),
            tools: vec!["browser_*".into()],
            admin: false,
        },
        ScopeGrant {
            scope: "axon:http".into(),
            tools: vec!["http_request".into()],
            admin: false,
        },
        ScopeGrant {
            scope: "axon:admin".into(),
            tools: vec!["*".into()],
            admin: true,
        },
    ];
    o
}

fn idp(issuers: Vec<IssuerOptions>) -> Idp {
    Idp::new(&IdpOptions {
        resource: RESOURCE.into(),
        issuers,
        dashboard: None,
    })
    .expect("issuers")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

fn claims(iss: &str, scope: &str) -> Value {
    json!({"iss": iss, "sub": "alice", "aud": RESOURCE, "exp": now() + 300, "iat": now(), "scope": scope})
}

fn sign(key: &TestKey, claims: &Value) -> String {
    let mut header = Header::new(key.alg);
    header.kid = Some(key.kid.clone());
    jsonwebtoken::encode(&header, claims, &key.encoding).expect("sign")
}

#[tokio::test]
async fn a_token_of_a_trusted_issuer_becomes_its_tenant_with_the_tools_its_scopes_grant() {
    let (ed, ec) = (ed25519("ed-1"), p256("ec-1"));
    let issuer = issuer(&[&ed, &ec], false).await;
    let idp = idp(vec![options(&issuer)]);
    let token = sign(&ed, &claims(&issuer.url, "openid axon:browser axon:http"));
    let principal = idp.verify(&token).await.expect("verified");
    assert_eq!(principal.tenant, "corp:alice");
    assert_eq!(principal.tools, vec!["browser_*", "http_request"]);
    assert!(!principal.admin);
    // Groups as an array claim count too; the admin scope grants all.
    let mut admin = claims(&issuer.url, "");
    admin["scp"] = json!(["axon:admin"]);
    let principal = idp.verify(&sign(&ec, &admin)).await.expect("verified");
    assert!(principal.admin);
    assert!(principal.tools.is_empty(), "every tool");
    // The /mcp resource is an audience too.
    let mut for_mcp = claims(&issuer.url, "axon:http");
    for_mcp["aud"] = json!([format!("{RESOURCE}/mcp")]);
    assert!(idp.verify(&sign(&ec, &for_mcp)).await.is_ok());
    assert_eq!(
        issuer.fetches.load(Ordering::SeqCst),
        1,
        "keys fetched once"
    );
    issuer.server.abort();
}

#[tokio::test]
async fn tokens_that_are_not_for_this_server_or_not_from_its_issuer_are_refused() {
    let (ed, ec) = (ed25519("ed-1"), p256("ec-1"));
    let issuer = issuer(&[&ed, &ec], false).await;
    let mut only_eddsa = options(&issuer);
    only_eddsa.algorithms = vec![SigningAlgorithm::EdDSA];
    only_eddsa.clock_skew = Duration::ZERO;
    let idp = idp(vec![only_eddsa]);
    let good = claims(&issuer.url, "axon:browser");
    let refused = |why: &str| Err(Refusal::Invalid(why.to_string()));
    let mut other_audience = good.clone();
    other_audience["aud"] = json!("https://elsewhere.example");
    assert_eq!(
        idp.verify(&sign(&ed, &other_audience)).await,
        refused("the token is not for this server (its aud)")
    );
    let mut expired = good.clone();
    expired["exp"] = json!(now() - 5);
    assert_eq!(
        idp.verify(&sign(&ed, &expired)).await,
        refused("the token has expired")
    );
    let mut not_yet = good.clone();
    not_yet["nbf"] = json!(now() + 120);
    assert_eq!(
        idp.verify(&sign(&ed, &not_yet)).await,
        refused("the token is not valid yet (nbf)")
    );
    let mut untrusted = good.clone();
    untrusted["iss"] = json!("https://evil.example");
    assert_eq!(
        idp.verify(&sign(&ed, &untrusted)).await,
        refused("the token's issuer is not trusted here")
    );
    // ES256 is a published key, but not an algorithm this issuer allows.
    assert_eq!(
        idp.verify(&sign(&ec, &good)).await,
        refused("the algorithm ES256 is not accepted for this issuer")
    );
    // A key of the attacker's own under the issuer's kid.
    let forged = ed25519("ed-1");
    assert_eq!(
        idp.verify(&sign(&forged, &good)).await,
        refused("the token's signature does not verify")
    );
    let mut no_tenant = good.clone();
    no_tenant.as_object_mut().expect("object").remove("sub");
    assert!(
        matches!(idp.verify(&sign(&ed, &no_tenant)).await, Err(Refusal::Invalid(why)) if why.contains("\"sub\""))
    );
    let mut no_exp = good.clone();
    no_exp.as_object_mut().expect("object").remove("exp");
    assert_eq!(
        idp.verify(&sign(&ed, &no_exp)).await,
        refused("the token lacks exp, iss or aud")
    );
    // Valid, but granting nothing here: 403 naming what would.
    assert_eq!(
        idp.verify(&sign(&ed, &claims(&issuer.url, "openid profile")))
            .await,
        Err(Refusal::Scope(vec![
            "axon:browser".into(),
            "axon:http".into(),
            "axon:admin".into()
        ]))
    );
    assert!(matches!(
        idp.verify("not.a.jwt").await,
        Err(Refusal::Invalid(_))
    ));
    assert!(matches!(
        idp.verify("eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.").await,
        Err(Refusal::Invalid(_))
    ));
    issuer.server.abort();
}

#[tokio::test]
async fn an_unknown_key_id_asks_the_issuer_again_but_not_on_every_request() {
    let (old, new) = (ed25519("old"), ed25519("new"));
    let issuer = issuer(&[&old], false).await;
    let idp = idp(vec![options(&issuer)]);
    let good = claims(&issuer.url, "axon:browser");
    assert!(idp.verify(&sign(&old, &good)).await.is_ok());
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    // The issuer rotates: the new key is fetched on its first use, and the
    // old one, no longer published, is refused from then on (after asking
    // once more: fetch 3).
    *issuer.keys.lock().expect("keys") = vec![new.jwk.clone()];
    assert!(idp.verify(&sign(&new, &good)).await.is_ok());
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2);
    assert_eq!(
        idp.verify(&sign(&old, &good)).await,
        Err(Refusal::Invalid(
            "the token is signed with a key its issuer does not publish".into()
        ))
    );
    // Made-up kids ask the issuer at most once a second, each waiting for
    // that turn: ten at once cost it one fetch.
    let made_up = ed25519("made-up");
    let token = sign(&made_up, &good);
    let started = Instant::now();
    let all = futures::future::join_all((0..10).map(|_| idp.verify(&token))).await;
    assert!(all.iter().all(Result::is_err));
    assert_eq!(
        issuer.fetches.load(Ordering::SeqCst),
        4,
        "one fetch for ten unknown kids"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // A key the issuer publishes later is still picked up, on its first use.
    let newer = ed25519("newer");
    issuer.keys.lock().expect("keys").push(newer.jwk.clone());
    assert!(idp.verify(&sign(&newer, &good)).await.is_ok());
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 5);
    issuer.server.abort();
}

#[tokio::test]
async fn an_issuer_that_goes_down_keeps_its_keys_and_one_never_reached_lets_nothing_in() {
    let ed = ed25519("ed-1");
    let issuer = issuer(&[&ed], false).await;
    let mut always_stale = options(&issuer);
    always_stale.keys_ttl = Duration::ZERO; // every request asks again
    let idp = idp(vec![always_stale.clone()]);
    let good = claims(&issuer.url, "axon:browser");
    assert!(idp.verify(&sign(&ed, &good)).await.is_ok());
    issuer.server.abort();
    let _ = issuer.server.await;
    // Another token (not one verified before): its key comes from the
    // keys held, the issuer being down.
    let mut other = good.clone();
    other["jti"] = json!("second");
    assert!(
        idp.verify(&sign(&ed, &other)).await.is_ok(),
        "the keys fetched before stay in use"
    );
    // A fresh verifier of the same (now down) issuer has no keys: 503.
    let cold = super::Idp::new(&IdpOptions {
        resource: RESOURCE.into(),
        issuers: vec![always_stale],
        dashboard: None,
    })
    .expect("issuers");
    assert!(
        matches!(cold.verify(&sign(&ed, &good)).await, Err(Refusal::Unavailable(why)) if why.contains("could not be fetched"))
    );
}

#[tokio::test]
async fn a_key_endpoint_that_hangs_costs_one_fetch_timeout_and_lets_nothing_in() {
    let ed = ed25519("ed-1");
    let issuer = issuer(&[&ed], true).await;
    let idp = idp(vec![options(&issuer)]);
    let token = sign(&ed, &claims(&issuer.url, "axon:browser"));
    let started = Instant::now();
    let (a, b) = tokio::join!(idp.verify(&token), idp.verify(&token));
    assert!(matches!(a, Err(Refusal::Unavailable(_))), "{a:?}");
    assert!(matches!(b, Err(Refusal::Unavailable(_))), "{b:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        issuer.fetches.load(Ordering::SeqCst),
        1,
        "one fetch for both"
    );
    issuer.server.abort();
}

#[tokio::test]
async fn a_token_verified_before_is_refused_once_it_expires() {
    let ed = ed25519("ed-1");
    let issuer = issuer(&[&ed], false).await;
    let mut strict = options(&issuer);
    strict.clock_skew = Duration::ZERO;
    let idp = idp(vec![strict]);
    let mut short = claims(&issuer.url, "axon:browser");
    short["exp"] = json!(now() + 1);
    let token = sign(&ed, &short);
    assert!(idp.verify(&token).await.is_ok());
    assert!(idp.verify(&token).await.is_ok(), "remembered");
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(
        idp.verify(&token).await,
        Err(Refusal::Invalid("the token has expired".into()))
    );
    issuer.server.abort();
}
