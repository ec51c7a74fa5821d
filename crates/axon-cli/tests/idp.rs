//! `axon serve` signed into by a real OpenID provider (`oidc-provider` from
//! npm, peers/idp/provider.mjs): an agent's client-credentials token calls
//! tools over `/v1` and `/mcp`; a bearer without a token is told where the
//! Protected Resource Metadata is; and the attacks on tokens are each
//! refused with their status, each shown first to pass a naive check that
//! reads the claims without verifying them.

mod common;

use std::process::{Child, Stdio};

use base64::Engine;
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::repo_root;
use common::served::{Served, client};

/// `application/x-www-form-urlencoded` (the workspace's reqwest has no
/// `form` feature).
fn form(pairs: &[(&str, &str)]) -> String {
    let encode = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    char::from(b).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The provider, killed on drop.
struct Provider {
    child: Child,
    issuer: String,
}

impl Provider {
    fn start() -> Provider {
        let script = repo_root().join("peers/idp/provider.mjs");
        assert!(
            repo_root()
                .join("peers/node_modules/oidc-provider")
                .exists(),
            "oidc-provider is not installed: run scripts/peers"
        );
        let keys = std::env::temp_dir().join(format!("axon-idp-keys-{}.json", ulid::Ulid::new()));
        let mut child = axon_testkit::command("node")
            .arg(script)
            .args(["--port", "0", "--keys"])
            .arg(&keys)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs the provider");
        let mut line = String::new();
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("piped"));
        std::io::BufRead::read_line(&mut stdout, &mut line)
            .expect("the provider prints its issuer");
        // It goes on writing (notices on its first sign-in): a closed pipe
        // would kill it.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let issuer = line
            .trim()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Provider { child, issuer }
    }

    /// A client-credentials token for `resource` with `scope`.
    async fn token(&self, client_id: &str, secret: &str, scope: &str, resource: &str) -> String {
        let r = client()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client_id, Some(secret))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("grant_type", "client_credentials"),
                ("scope", scope),
                ("resource", resource),
            ]))
            .send()
            .await
            .expect("token endpoint");
        let body: Value = r.json().await.expect("token JSON");
        body["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {body}"))
            .to_string()
    }

    /// A token the test writes, signed as asked (test-only endpoint).
    async fn mint(&self, body: Value) -> String {
        let r = client()
            .post(format!("{}/test/mint", self.issuer))
            .json(&body)
            .send()
            .await
            .expect("mint");
        assert_eq!(r.status(), StatusCode::OK);
        r.text().await.expect("token")
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An `axon serve` trusting `issuer`, with `extra` issuers after it.
fn serve(issuer: &str, extra: &str) -> Served {
    Served::start(&format!(
        r#"
[[server.auth.issuers]]
name = "corp"
issuer = "{issuer}"
clock_skew_s = 0
[[server.auth.issuers.grants]]
scope = "axon:tools"
tools = ["echo", "http_request"]
[[server.auth.issuers.grants]]
scope = "axon:browser"
tools = ["browser_*"]
[[server.auth.issuers.grants]]
scope = "axon:admin"
admin = true
{extra}"#
    ))
}

async fn call(s: &Served, token: &str, tool: &str) -> reqwest::Response {
    client()
        .post(s.url(&format!("/v1/tools/{tool}/call")))
        .bearer_auth(token)
        .json(&json!({"args": {"message": "hi"}}))
        .send()
        .await
        .expect("call")
}

fn challenge(r: &reqwest::Response) -> String {
    r.headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// What a server that only reads the claims would decide: the token's
/// payload names a scope Axon grants.
fn naive_accepts(token: &str) -> bool {
    let Some(payload) = token.split('.').nth(1) else {
        return false;
    };
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload) else {
        return false;
    };
    let claims: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    claims["scope"]
        .as_str()
        .is_some_and(|s| s.split(' ').any(|s| s.starts_with("axon:")))
}

#[tokio::test]
async fn an_agent_signs_in_with_client_credentials_and_calls_only_its_tools() {
    let idp = Provider::start();
    let s = serve(&idp.issuer, "[server]\nauth_tokens = [\"static-full-1\"]\n");
    // A static token keeps working beside the issuer.
    assert_eq!(
        call(&s, "static-full-1", "browser_navigate").await.status(),
        StatusCode::BAD_REQUEST
    );
    // No token: 401, and where to learn how to get one.
    let r = call(&s, "", "echo").await;
    let bare = client().get(s.url("/v1/tools")).send().await.expect("get");
    assert_eq!(bare.status(), StatusCode::UNAUTHORIZED);
    let root_metadata = format!("{}/.well-known/oauth-protected-resource", s.base);
    // It asks for the scopes that are not admin: least privilege by default.
    assert_eq!(
        challenge(&bare),
        format!("Bearer scope=\"axon:tools axon:browser\", resource_metadata=\"{root_metadata}\"")
    );
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let mcp = s
        .mcp_post(
            None,
            None,
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        )
        .await;
    assert_eq!(mcp.status(), StatusCode::UNAUTHORIZED);
    assert!(
        challenge(&mcp).contains(&format!("{root_metadata}/mcp\"")),
        "{}",
        challenge(&mcp)
    );
    // The metadata names the issuer; /mcp's names /mcp as the resource.
    let metadata = s.get_json("/.well-known/oauth-protected-resource").await;
    assert_eq!(metadata["resource"], json!(s.base));
    assert_eq!(metadata["authorization_servers"], json!([idp.issuer]));
    assert_eq!(
        metadata["scopes_supported"],
        json!(["axon:admin", "axon:browser", "axon:tools"])
    );
    let for_mcp = s
        .get_json("/.well-known/oauth-protected-resource/mcp")
        .await;
    assert_eq!(for_mcp["resource"], json!(format!("{}/mcp", s.base)));

    // An agent's token for this server, with axon:tools only.
    let token = idp
        .token("axon-agent", "agent-secret", "axon:tools", &s.base)
        .await;
    let r = call(&s, &token, "echo").await;
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["success"], json!(true), "{body}");
    let listed: Value = client()
        .get(s.url("/v1/tools"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("tools")
        .json()
        .await
        .expect("json");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["echo", "http_request"]);
    // A tool outside its scope: 403 naming the scopes that grant it.
    let r = call(&s, &token, "browser_navigate").await;
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        challenge(&r),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"axon:browser axon:admin\", resource_metadata=\"{root_metadata}\""
        )
    );
    // Admin work too.
    let r = client()
        .post(s.url("/v1/breakers/echo/reset"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("reset");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&r).contains("scope=\"axon:admin\""),
        "{}",
        challenge(&r)
    );

    // Over /mcp, with a token whose audience is /mcp: the same tools.
    let token = idp
        .token(
            "axon-agent",
            "agent-secret",
            "axon:tools",
            &format!("{}/mcp", s.base),
        )
        .await;
    let session = s.mcp_session(Some(&token)).await;
    let listing = s
        .mcp_send(
            Some(&token),
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        )
        .await;
    assert!(
        listing.contains("\"echo\"") && listing.contains("\"http_request\""),
        "{listing}"
    );
    assert!(
        !listing.contains("browser_navigate") && !listing.contains("run_plan"),
        "{listing}"
    );
    let called = s
        .mcp_send(
            Some(&token),
            &session,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"message": "over mcp"}}}),
        )
        .await;
    assert!(
        called.contains("over mcp") && !called.contains("\"isError\":true"),
        "{called}"
    );
    // Another agent (another tenant) cannot use that session.
    let reader = idp
        .token(
            "axon-reader",
            "reader-secret",
            "axon:tools",
            &format!("{}/mcp", s.base),
        )
        .await;
    let hijack = s
        .mcp_post(
            Some(&reader),
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        )
        .await;
    assert_ne!(
        hijack.status(),
        StatusCode::OK,
        "a session is its principal's"
    );
    // The token never reaches the server's log.
    let log = std::fs::read_to_string(s.dir.join("stderr.log")).unwrap_or_default();
    assert!(
        !log.contains(&token) && !log.contains(&reader),
        "a token was logged"
    );
}

#[tokio::test]
async fn attacks_on_the_token_are_refused_with_their_status() {
    let idp = Provider::start();
    // A second trusted issuer whose key endpoint hangs.
    let hang = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let hanging = format!("http://{}", hang.local_addr().expect("addr"));
    let _held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = hang.accept().await {
            open.push(socket); // accepted, never answered
        }
    });
    let s = serve(
        &idp.issuer,
        &format!(
            "[[server.auth.issuers]]\nname = \"slow\"\nissuer = \"{hanging}\"\nfetch_timeout_ms = 500\n[[server.auth.issuers.grants]]\nscope = \"axon:tools\"\n"
        ),
    );
    let good = idp
        .token("axon-agent", "agent-secret", "axon:tools", &s.base)
        .await;
    assert_eq!(call(&s, &good, "echo").await.status(), StatusCode::OK);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let claims = |changes: Value| {
        let mut c = json!({"iss": idp.issuer, "sub": "mallory", "aud": s.base,
                           "exp": now + 300, "iat": now, "scope": "axon:tools"});
        for (k, v) in changes.as_object().expect("object") {
            c[k] = v.clone();
        }
        c
    };
    let attacks = [
        (
            "another audience",
            json!({"claims": claims(json!({"aud": "https://other.example"}))}),
            StatusCode::UNAUTHORIZED,
            "not for this server",
        ),
        (
            "expired",
            json!({"claims": claims(json!({"exp": now - 10}))}),
            StatusCode::UNAUTHORIZED,
            "expired",
        ),
        (
            "alg none",
            json!({"claims": claims(json!({})), "key": "none"}),
            StatusCode::UNAUTHORIZED,
            "not a signed JWT",
        ),
        (
            "HS256 keyed with the public key",
            json!({"claims": claims(json!({})), "key": "hs-public"}),
            StatusCode::UNAUTHORIZED,
            "HS256",
        ),
        (
            "an unknown kid",
            json!({"claims": claims(json!({})), "kid": "not-published"}),
            StatusCode::UNAUTHORIZED,
            "does not publish",
        ),
        (
            "an untrusted issuer",
            json!({"claims": claims(json!({"iss": "https://evil.example"}))}),
            StatusCode::UNAUTHORIZED,
            "not trusted",
        ),
        (
            "no scope Axon grants",
            json!({"claims": claims(json!({"scope": "openid", "roles": ["axon:admin"]}))}),
            StatusCode::FORBIDDEN,
            "no scope",
        ),
        (
            "an issuer whose keys hang",
            json!({"claims": claims(json!({"iss": hanging}))}),
            StatusCode::SERVICE_UNAVAILABLE,
            "could not be fetched",
        ),
    ];
    for (attack, request, status, why) in attacks {
        let token = idp.mint(request).await;
        if status != StatusCode::FORBIDDEN {
            assert!(
                naive_accepts(&token),
                "{attack}: the naive check would let it in"
            );
        }
        let started = std::time::Instant::now();
        let r = call(&s, &token, "echo").await;
        assert_eq!(r.status(), status, "{attack}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{attack}: bounded"
        );
        let refused_with = challenge(&r);
        let body: Value = r.json().await.expect("problem");
        assert!(
            body["detail"].as_str().unwrap_or_default().contains(why),
            "{attack}: {body}"
        );
        if status == StatusCode::UNAUTHORIZED {
            assert!(
                refused_with.contains("error=\"invalid_token\""),
                "{attack}: {refused_with}"
            );
        }
    }
    // Scope escalation: the reader client may not ask for admin at all, and
    // its token does no admin work.
    let r = client()
        .post(format!("{}/token", idp.issuer))
        .basic_auth("axon-reader", Some("reader-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("grant_type", "client_credentials"),
            ("scope", "axon:admin"),
            ("resource", &s.base),
        ]))
        .send()
        .await
        .expect("token");
    assert_eq!(
        r.status(),
        StatusCode::BAD_REQUEST,
        "the IdP refuses the scope"
    );
    let reader = idp
        .token("axon-reader", "reader-secret", "axon:tools", &s.base)
        .await;
    let approvals = client()
        .get(s.url("/v1/breakers/echo/reset"))
        .bearer_auth(&reader)
        .send()
        .await
        .expect("reset");
    assert_ne!(approvals.status(), StatusCode::OK);

    // A rotation: the new key is picked up on its first token, and a token
    // signed with the retired key is refused from then on.
    let rotated = client()
        .post(format!("{}/test/rotate", idp.issuer))
        .send()
        .await
        .expect("rotate");
    assert_eq!(rotated.status(), StatusCode::OK);
    let fresh = idp
        .token("axon-agent", "agent-secret", "axon:tools", &s.base)
        .await;
    assert_eq!(call(&s, &fresh, "echo").await.status(), StatusCode::OK);
    let r = call(&s, &good, "echo").await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "a retired key");
}

#[tokio::test]
async fn the_python_sdk_finds_the_issuer_from_a_bare_401_and_calls_tools_in_both_protocol_generations()
 {
    let idp = Provider::start();
    let s = serve(&idp.issuer, "");
    let python = repo_root().join("peers/venv/bin/python");
    assert!(
        python.exists(),
        "the Python MCP SDK is not installed: run scripts/peers"
    );
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let out = tokio::process::Command::from(axon_testkit::command(&python))
            .arg(repo_root().join("peers/idp/mcp_oauth_check.py"))
            .args(["--mode", mode])
            .arg(s.url("/mcp"))
            .args([&idp.issuer, "axon-agent", "agent-secret", "axon:tools"])
            .output()
            .await
            .expect("python runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{mode}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_str(&stdout).expect("one JSON document");
        assert_eq!(report["protocol"], json!(protocol), "{mode}");
        // It asked for what the bare 401 named (tools and browser), not
        // for every scope the metadata lists (admin).
        let tools: Vec<&str> = report["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            tools.contains(&"echo") && tools.contains(&"browser_click"),
            "{mode}: {tools:?}"
        );
        assert!(
            !tools.contains(&"flaky") && !tools.contains(&"run_plan"),
            "{mode}: not an admin's listing: {tools:?}"
        );
        assert_eq!(report["echo"]["isError"], json!(false), "{mode}: {report}");
        assert_eq!(
            report["echo"]["structuredContent"],
            json!({"from": "python-oauth"})
        );
        // It began with no token and found its way from the 401.
        let requests: Vec<&str> = report["requests"]
            .as_array()
            .expect("requests")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(requests.get(1), Some(&"-> 401"), "{mode}: {requests:?}");
        assert!(
            requests
                .iter()
                .any(|r| r.starts_with("GET /.well-known/oauth-protected-resource/mcp")),
            "{mode}: {requests:?}"
        );
        assert!(
            requests.iter().any(|r| r.starts_with("POST /token")),
            "{mode}: {requests:?}"
        );
    }
}

#[test]
fn the_worked_example_checks_and_an_issuer_that_is_down_is_a_warning() {
    let out = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .args(["config", "check"])
        .arg(repo_root().join("examples/idp/axon.toml"))
        .env_remove("AXON_CONFIG")
        .output()
        .expect("axon runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Nothing listens on the example's provider port in the tests.
    assert!(
        stderr.contains("warning: server.auth.issuers[0] (http://127.0.0.1:9400)")
            && stderr.contains("refused (503) until it answers"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_person_signs_in_to_the_dashboard_with_the_authorization_code_flow_and_pkce() {
    use common::dashboard::{act, browser};
    let idp = Provider::start();
    let s = serve(
        &idp.issuer,
        "[server.auth.dashboard]\nclient_id = \"axon-dashboard\"\nscopes = [\"axon:tools\", \"axon:admin\"]\n",
    );
    let r = client()
        .post(format!("{}/test/resource", idp.issuer))
        .json(&json!({"resource": s.base}))
        .send()
        .await
        .expect("resource");
    assert!(r.status().is_success());
    let settings = s.get_json("/auth/dashboard.json").await;
    assert_eq!(settings["client_id"], json!("axon-dashboard"));
    assert_eq!(settings["issuer"], json!(idp.issuer));

    let b = browser();
    act(&b, "browser_navigate", json!({"url": s.url("/tools")})).await;
    // The API said 401: the page offers to sign in.
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "#sign-in", "timeout_ms": 10000}),
    )
    .await;
    act(&b, "browser_click", json!({"selector": "#sign-in"})).await;
    // The provider's sign-in page (any name signs in).
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "input[name=login]", "timeout_ms": 10000}),
    )
    .await;
    act(
        &b,
        "browser_type",
        json!({"selector": "input[name=login]", "text": "ada"}),
    )
    .await;
    act(
        &b,
        "browser_type",
        json!({"selector": "input[name=password]", "text": "anything"}),
    )
    .await;
    act(
        &b,
        "browser_click",
        json!({"selector": "button.login-submit"}),
    )
    .await;
    // Its consent page: the person allows the scopes the dashboard asked for.
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "input[name=prompt][value=consent]", "state": "attached", "timeout_ms": 10000}),
    )
    .await;
    let consent = act(&b, "browser_get_text", json!({"selector": "body"})).await;
    assert!(
        consent.data.to_string().contains("axon:tools axon:admin"),
        "{}",
        consent.data
    );
    act(
        &b,
        "browser_click",
        json!({"selector": "button.login-submit"}),
    )
    .await;
    // Back on the dashboard, signed in: the tools page renders from the API.
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "main table", "timeout_ms": 15000}),
    )
    .await;
    let state = act(&b, "browser_get_page_state", json!({})).await;
    let url = state.data["url"].as_str().unwrap_or_default().to_string();
    assert_eq!(url, s.url("/tools"), "back where the person was");
    let text = act(&b, "browser_get_text", json!({"selector": "main"})).await;
    let text = text.data.to_string();
    // The admin scope was granted: every tool is listed, not axon:tools' two.
    assert!(
        text.contains("echo") && text.contains("flaky") && text.contains("browser_click"),
        "{text}"
    );
    assert!(!text.contains("wants a bearer token"), "{text}");
    // The person is the admin the grant says: an admin page answers.
    let approvals = act(&b, "browser_navigate", json!({"url": s.url("/approvals")})).await;
    assert!(approvals.success);
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "main h1", "timeout_ms": 10000}),
    )
    .await;
    let text = act(&b, "browser_get_text", json!({"selector": "main"})).await;
    assert!(
        !text.data.to_string().contains("wants a bearer token"),
        "{}",
        text.data
    );
}

/// `method path` as `token`, with a JSON body when given: status and body.
async fn send(
    s: &Served,
    token: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut r = client().request(method, s.url(path)).bearer_auth(token);
    if let Some(body) = body {
        r = r.json(&body);
    }
    let r = r.send().await.expect("request");
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn signed_in_tenants_keep_their_history_runs_and_secrets_apart() {
    let idp = Provider::start();
    let s = Served::start_with(
        &format!(
            r#"
[[server.auth.issuers]]
name = "corp"
issuer = "{}"
[[server.auth.issuers.grants]]
scope = "axon:tools"
tools = ["echo"]
[server.auth.issuers.secrets]
"axon-agent" = ["A_KEY"]
[secrets]
A_KEY = {{ env = "AXON_TEST_A_KEY" }}
"#,
            idp.issuer
        ),
        &[("AXON_TEST_A_KEY", "a-secret-value-42")],
    );
    // Two clients of one issuer: the tenants corp:axon-agent and corp:axon-reader.
    let a = idp
        .token("axon-agent", "agent-secret", "axon:tools", &s.base)
        .await;
    let b = idp
        .token("axon-reader", "reader-secret", "axon:tools", &s.base)
        .await;
    let call = json!({"args": {"message": "a's"}, "correlation_id": "shared-id"});
    let (status, _) = send(&s, &a, "POST", "/v1/tools/echo/call", Some(call)).await;
    assert_eq!(status, 200);
    // History: B, using the same correlation id, reads none of A's calls.
    assert_eq!(
        send(&s, &b, "GET", "/v1/history/shared-id", None).await.0,
        404
    );
    let (status, mine) = send(&s, &a, "GET", "/v1/history/shared-id", None).await;
    assert_eq!(status, 200);
    assert!(mine.to_string().contains("corp:axon-agent"), "{mine}");
    // Secrets: granted to A's tenant pattern only.
    let plan =
        json!({"steps": [{"id": "k", "tool": "echo", "params": {"key": "${secret.A_KEY}"}}]});
    let (status, run) = send(&s, &a, "POST", "/v1/runs?wait=true", Some(plan.clone())).await;
    assert_eq!(status, 200, "{run}");
    let id = run["run_id"].as_str().expect("run id").to_string();
    let (_, stored) = send(&s, &a, "GET", &format!("/v1/history/{id}"), None).await;
    assert!(stored.to_string().contains("corp:axon-agent"), "{stored}");
    assert!(
        !stored.to_string().contains("a-secret-value-42"),
        "masked when stored: {stored}"
    );
    let (status, refused) = send(&s, &b, "POST", "/v1/runs?wait=true", Some(plan)).await;
    assert_eq!(status, 422, "{refused}");
    assert!(refused.to_string().contains("A_KEY"), "{refused}");
    // Runs: B neither reads nor lists A's.
    assert_eq!(
        send(&s, &b, "GET", &format!("/v1/runs/{id}"), None).await.0,
        404
    );
    let (_, listed) = send(&s, &b, "GET", "/v1/runs", None).await;
    assert!(!listed.to_string().contains(&id), "{listed}");
    assert_eq!(
        send(&s, &a, "GET", &format!("/v1/runs/{id}"), None).await.0,
        200
    );
}
