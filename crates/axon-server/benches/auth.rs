//! What verifying an identity provider's token adds to a request, keys
//! cached: `GET /v1/tools/echo` through the whole router (edge checks,
//! auth, the handler), with a static bearer token (the baseline, same run)
//! and with JWT access tokens signed RS256, ES256 and EdDSA by an issuer on
//! loopback whose keys were fetched before the first sample: the same token
//! on every request (what an agent sends; the server remembers it
//! verified), and a token never seen before on each (its signature checked).
//!
//! Run: `cargo bench -p axon-server --bench auth` (needs `openssl` on the
//! PATH to make the RSA key; ring makes the others). Figures go to
//! docs/benchmarks.md ("Signing in").

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axon_core::{Executor, ToolRegistry};
use axon_plan::PlanRunner;
use axon_server::{IdpOptions, IssuerOptions, ScopeGrant, Server, ServerOptions};
use axon_store::{Retention, SqliteStore};
use axon_store_roles::Stores;
use axum::body::Body;
use axum::http::Request;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair,
};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Distinct tokens cycled through when every request should verify a
/// signature: more than the server's memo of verified tokens (4096) holds.
const FRESH: usize = 5000;

/// A signing key and its public JWK.
struct Signer {
    alg: Algorithm,
    key: EncodingKey,
    jwk: Value,
}

fn rsa() -> Signer {
    let pem = std::process::Command::new("openssl")
        .args(["genrsa", "2048"])
        .output()
        .expect("openssl makes the bench's RSA key");
    let mut der = std::process::Command::new("openssl")
        .args(["rsa", "-outform", "DER", "-traditional"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("openssl rsa");
    std::io::Write::write_all(&mut der.stdin.take().expect("stdin"), &pem.stdout)
        .expect("the PEM key");
    let der = der.wait_with_output().expect("DER").stdout;
    let pair = RsaKeyPair::from_der(&der).expect("an RSA key");
    let public = ring::rsa::PublicKeyComponents::<Vec<u8>>::from(pair.public());
    let (n, e) = (public.n, public.e);
    Signer {
        alg: Algorithm::RS256,
        key: EncodingKey::from_rsa_der(&der),
        jwk: json!({"kty": "RSA", "kid": "rs", "alg": "RS256", "n": B64.encode(n), "e": B64.encode(e)}),
    }
}

fn p256() -> Signer {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("p256");
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
        .expect("pair");
    let point = pair.public_key().as_ref();
    Signer {
        alg: Algorithm::ES256,
        key: EncodingKey::from_ec_der(pkcs8.as_ref()),
        jwk: json!({"kty": "EC", "crv": "P-256", "kid": "ec", "alg": "ES256",
                    "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..65])}),
    }
}

fn ed25519() -> Signer {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("ed25519");
    let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("pair");
    Signer {
        alg: Algorithm::EdDSA,
        key: EncodingKey::from_ed_der(pkcs8.as_ref()),
        jwk: json!({"kty": "OKP", "crv": "Ed25519", "kid": "ed", "alg": "EdDSA",
                    "x": B64.encode(pair.public_key().as_ref())}),
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let signers = [rsa(), p256(), ed25519()];
    let jwks = json!({"keys": signers.iter().map(|s| s.jwk.clone()).collect::<Vec<_>>()});
    let (router, issuer) = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let issuer = format!("http://{}", listener.local_addr().expect("addr"));
        let keys = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                let jwks = jwks.clone();
                async move { axum::Json(jwks) }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, keys).await });
        let mut options = IssuerOptions::new("corp", &issuer);
        options.jwks_url = Some(format!("{issuer}/jwks"));
        options.grants = vec![ScopeGrant {
            scope: "axon:tools".into(),
            tools: vec!["echo".into()],
            admin: false,
        }];
        let path = std::env::temp_dir().join(format!("axon-bench-auth-{}.db", std::process::id()));
        let store = Arc::new(
            SqliteStore::open(&path, Retention::default())
                .await
                .expect("store"),
        );
        let executor = Executor::builder(ToolRegistry::with_utilities())
            .build()
            .expect("executor");
        let server = Server::new(
            PlanRunner::with_store(executor, store.clone()),
            &Stores::of(store),
            ServerOptions {
                auth_tokens: vec!["static-token".into()],
                idp: IdpOptions {
                    resource: "http://127.0.0.1:7878".into(),
                    issuers: vec![options],
                    dashboard: None,
                },
                ..ServerOptions::default()
            },
        );
        (server.router(), issuer)
    });
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let claims = json!({"iss": issuer, "sub": "agent-7", "aud": "http://127.0.0.1:7878",
                        "exp": now + 3600, "iat": now, "scope": "axon:tools"});
    let sign = |signer: &Signer, jti: usize| {
        let mut header = Header::new(signer.alg);
        header.kid = signer.jwk["kid"].as_str().map(str::to_string);
        let mut claims = claims.clone();
        claims["jti"] = json!(jti);
        jsonwebtoken::encode(&header, &claims, &signer.key).expect("sign")
    };
    let mut bearers = vec![("static token".to_string(), "static-token".to_string())];
    for signer in &signers {
        bearers.push((format!("JWT {:?}", signer.alg), sign(signer, 0)));
    }
    let request = |bearer: &str| {
        Request::get("/v1/tools/echo")
            .header("authorization", format!("Bearer {bearer}"))
            .body(Body::empty())
            .expect("request")
    };
    // Every token verifies (and its issuer's keys are fetched) before timing.
    for (name, bearer) in &bearers {
        let status = rt
            .block_on(router.clone().oneshot(request(bearer)))
            .expect("reply")
            .status();
        assert!(status.is_success(), "{name}: {status}");
    }
    let mut group = c.benchmark_group("auth");
    for (name, bearer) in &bearers {
        group.bench_function(name.as_str(), |b| {
            b.to_async(&rt).iter(|| async {
                router
                    .clone()
                    .oneshot(request(bearer))
                    .await
                    .expect("reply")
            })
        });
    }
    // A token never seen before each time (more than the verified-token
    // memo holds, cycled): the signature is checked on every request.
    for signer in &signers {
        let tokens: Vec<String> = (1..=FRESH).map(|jti| sign(signer, jti)).collect();
        let next = std::cell::Cell::new(0usize);
        group.bench_function(
            format!("JWT {:?}, a new token each call", signer.alg),
            |b| {
                b.to_async(&rt).iter(|| {
                    let i = next.get();
                    next.set((i + 1) % tokens.len());
                    let r = router.clone().oneshot(request(&tokens[i]));
                    async move { r.await.expect("reply") }
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
