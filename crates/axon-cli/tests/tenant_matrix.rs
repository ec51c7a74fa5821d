//! The tenant matrix (issue 59): for each resource a client of `axon serve`
//! keeps — files, history, browser sessions, runs, idempotency keys,
//! secrets, the breakers and retry budgets every client shares — and each thing another client could do to it (read, list,
//! overwrite, delete, squat a name, use), what tenant B gets when it tries it
//! on tenant A's, and what A (or the admin) finds afterwards. One real
//! `axon serve` with two scoped tokens and an admin token; one table, so a
//! new resource is one new row. docs/security.md, "Who owns what", names it.

mod common;

use common::served::{Served, client};
use serde_json::{Value, json};

const CONFIG: &str = r#"
[server]
auth_tokens = ["admin-0000"]
[[server.tokens]]
env = "AXON_TEST_TOKEN_A"
tools = ["echo", "sleep", "browser_*"]
secrets = ["A_KEY"]
[[server.tokens]]
env = "AXON_TEST_TOKEN_B"
tools = ["echo", "sleep", "browser_*"]
[history]
max_per_correlation = 3
[secrets]
A_KEY = { env = "AXON_TEST_A_KEY" }
"#;
const ENV: [(&str, &str); 3] = [
    ("AXON_TEST_TOKEN_A", "tok-a-1111"),
    ("AXON_TEST_TOKEN_B", "tok-b-2222"),
    ("AXON_TEST_A_KEY", "a-secret-value-42"),
];

/// Who acts.
#[derive(Clone, Copy, Debug)]
enum Who {
    A,
    B,
    Admin,
}

impl Who {
    fn token(self) -> &'static str {
        match self {
            Who::A => "tok-a-1111",
            Who::B => "tok-b-2222",
            Who::Admin => "admin-0000",
        }
    }
}

/// What one step does: its request (JSON texts, so the table stays data).
/// `$handle` in a text stands for the browser session the row's last
/// `browser_session_new` opened.
#[derive(Clone, Copy, Debug)]
enum Act {
    /// `POST /v1/tools/{tool}/call` with `{"args": ARGS, "correlation_id": ID}`.
    Call(&'static str, &'static str, &'static str),
    /// The same call `n` times.
    Repeat(usize, &'static str, &'static str, &'static str),
    /// `POST /v1/runs?wait=true` with the plan.
    Plan(&'static str),
    /// `GET /v1/history/{id}`.
    History(&'static str),
    /// `GET /v1/runs`.
    Runs,
    /// `POST /v1/tools/echo/call` with an Idempotency-Key and the message.
    Keyed(&'static str, &'static str),
    /// The call `n` times, each with the caller's own `timeout_ms` of 5.
    Tight(usize, &'static str, &'static str, &'static str),
}

/// What the answer must be.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// The call succeeded.
    Ok,
    /// It failed with this error code (a call) or problem status (a request).
    Code(&'static str),
    Status(u16),
    /// The answer's text holds this, and not `not`.
    Holds(&'static str, &'static str),
}

struct Step(Who, Act, Expect);

/// One row: a resource, an operation, what A does first, what B tries, and
/// what must hold afterwards.
struct Row {
    resource: &'static str,
    op: &'static str,
    setup: &'static [Step],
    attack: Step,
    after: &'static [Step],
}

const NAVIGATE: &str = r#"{"url": "about:blank"}"#;

const MATRIX: &[Row] = &[
    Row {
        resource: "files",
        op: "read",
        setup: &[
            Step(
                Who::A,
                Act::Call("browser_navigate", NAVIGATE, "f-read"),
                Expect::Ok,
            ),
            Step(
                Who::A,
                Act::Call(
                    "browser_session_save",
                    r#"{"path": "a-state.json"}"#,
                    "f-read",
                ),
                Expect::Ok,
            ),
        ],
        attack: Step(
            Who::B,
            Act::Call(
                "browser_session_new",
                r#"{"storage_state_path": "a-state.json"}"#,
                "f-read-b",
            ),
            Expect::Code("file_not_found"),
        ),
        after: &[Step(
            Who::A,
            Act::Call(
                "browser_session_new",
                r#"{"storage_state_path": "a-state.json"}"#,
                "f-read",
            ),
            Expect::Ok,
        )],
    },
    Row {
        resource: "files",
        op: "overwrite",
        setup: &[
            Step(
                Who::A,
                Act::Call("browser_navigate", NAVIGATE, "f-over"),
                Expect::Ok,
            ),
            Step(
                Who::A,
                Act::Call("browser_session_save", r#"{"path": "over.json"}"#, "f-over"),
                Expect::Ok,
            ),
            Step(
                Who::B,
                Act::Call("browser_navigate", NAVIGATE, "f-over-b"),
                Expect::Ok,
            ),
        ],
        // B's write lands in B's own folder...
        attack: Step(
            Who::B,
            Act::Call(
                "browser_session_save",
                r#"{"path": "over.json", "overwrite": false}"#,
                "f-over-b",
            ),
            Expect::Ok,
        ),
        // ...and A's file is still there to be refused as existing.
        after: &[Step(
            Who::A,
            Act::Call("browser_session_save", r#"{"path": "over.json"}"#, "f-over"),
            Expect::Code("file_exists"),
        )],
    },
    Row {
        resource: "files",
        op: "squat a name",
        setup: &[Step(
            Who::B,
            Act::Call("browser_navigate", NAVIGATE, "f-squat-b"),
            Expect::Ok,
        )],
        attack: Step(
            Who::B,
            Act::Call(
                "browser_session_save",
                r#"{"path": "squat.json"}"#,
                "f-squat-b",
            ),
            Expect::Ok,
        ),
        after: &[
            Step(
                Who::A,
                Act::Call("browser_navigate", NAVIGATE, "f-squat"),
                Expect::Ok,
            ),
            Step(
                Who::A,
                Act::Call(
                    "browser_session_save",
                    r#"{"path": "squat.json"}"#,
                    "f-squat",
                ),
                Expect::Ok,
            ),
        ],
    },
    Row {
        resource: "history",
        op: "read",
        setup: &[Step(
            Who::A,
            Act::Call("echo", r#"{"message": "a-read-words"}"#, "h-read"),
            Expect::Ok,
        )],
        attack: Step(Who::B, Act::History("h-read"), Expect::Status(404)),
        after: &[
            Step(
                Who::A,
                Act::History("h-read"),
                Expect::Holds("a-read-words", ""),
            ),
            Step(
                Who::Admin,
                Act::History("h-read"),
                Expect::Holds("a-read-words", ""),
            ),
        ],
    },
    Row {
        resource: "history",
        op: "delete (trim)",
        setup: &[Step(
            Who::A,
            Act::Call("echo", r#"{"message": "a-trim-words"}"#, "h-trim"),
            Expect::Ok,
        )],
        // More calls under A's id than a group keeps (max_per_correlation 3).
        attack: Step(
            Who::B,
            Act::Repeat(4, "echo", r#"{"message": "b-trim-words"}"#, "h-trim"),
            Expect::Ok,
        ),
        after: &[Step(
            Who::A,
            Act::History("h-trim"),
            Expect::Holds("a-trim-words", "b-trim"),
        )],
    },
    Row {
        resource: "browser sessions",
        op: "delete",
        setup: &[Step(
            Who::A,
            Act::Call("browser_session_new", "{}", "s-del"),
            Expect::Ok,
        )],
        attack: Step(
            Who::B,
            Act::Call(
                "browser_session_close",
                r#"{"session": "$handle"}"#,
                "s-del-b",
            ),
            Expect::Holds(r#""closed":false"#, ""),
        ),
        after: &[Step(
            Who::A,
            Act::Call("browser_session_list", "{}", "s-del"),
            Expect::Holds("$handle", ""),
        )],
    },
    Row {
        resource: "browser sessions",
        op: "list",
        setup: &[Step(
            Who::A,
            Act::Call("browser_session_new", "{}", "s-list"),
            Expect::Ok,
        )],
        attack: Step(
            Who::B,
            Act::Call("browser_session_list", "{}", "s-list-b"),
            Expect::Holds("sessions", "$handle"),
        ),
        after: &[],
    },
    Row {
        resource: "browser sessions",
        op: "squat a name (a default session)",
        setup: &[Step(
            Who::A,
            Act::Call("browser_navigate", NAVIGATE, "s-squat"),
            Expect::Ok,
        )],
        // B's calls under A's correlation id get a page of B's own.
        attack: Step(
            Who::B,
            Act::Call("browser_navigate", NAVIGATE, "s-squat"),
            Expect::Ok,
        ),
        after: &[
            Step(
                Who::A,
                Act::Call("browser_navigate", NAVIGATE, "s-squat"),
                Expect::Ok,
            ),
            Step(
                Who::B,
                Act::Call("browser_session_list", "{}", "s-squat"),
                Expect::Holds("s-squat@token-2", "token-1"),
            ),
        ],
    },
    Row {
        resource: "runs",
        op: "list",
        setup: &[Step(
            Who::A,
            Act::Plan(
                r#"{"steps": [{"id": "say", "tool": "echo", "params": {"message": "a-run-words"}}]}"#,
            ),
            Expect::Ok,
        )],
        attack: Step(Who::B, Act::Runs, Expect::Holds("runs", "a-run")),
        after: &[],
    },
    Row {
        resource: "idempotency keys",
        op: "read (replay)",
        setup: &[Step(
            Who::A,
            Act::Keyed("key-1", "a-keyed-words"),
            Expect::Ok,
        )],
        attack: Step(
            Who::B,
            Act::Keyed("key-1", "b-keyed-words"),
            Expect::Holds("b-keyed-words", "a-keyed-words"),
        ),
        after: &[],
    },
    Row {
        resource: "secrets",
        op: "read (a plan)",
        setup: &[],
        attack: Step(
            Who::B,
            Act::Plan(
                r#"{"steps": [{"id": "leak", "tool": "echo", "params": {"message": "${secret.A_KEY}"}}]}"#,
            ),
            Expect::Holds("may not use the secret \\\"A_KEY\\\"", "a-secret-value"),
        ),
        after: &[
            Step(
                Who::A,
                Act::Plan(
                    r#"{"steps": [{"id": "use", "tool": "echo", "params": {"message": "${secret.A_KEY}"}}]}"#,
                ),
                Expect::Ok,
            ),
            Step(
                Who::Admin,
                Act::Plan(
                    r#"{"steps": [{"id": "use", "tool": "echo", "params": {"message": "${secret.A_KEY}"}}]}"#,
                ),
                Expect::Ok,
            ),
        ],
    },
    Row {
        resource: "breakers and retry budgets",
        op: "exhaust",
        setup: &[],
        // B's own tight timeouts, enough to open a breaker five times over:
        // they say nothing about the tool, and B pays its own retries.
        attack: Step(
            Who::B,
            Act::Tight(6, "sleep", r#"{"ms": 200}"#, "brk-b"),
            Expect::Status(504),
        ),
        after: &[Step(
            Who::A,
            Act::Call("sleep", r#"{"ms": 1}"#, "brk-a"),
            Expect::Ok,
        )],
    },
];

/// Do `act` as `who`, `$handle` standing for `handle`: whether it
/// succeeded, its status, and its body.
async fn act(s: &Served, who: Who, act: Act, handle: &str) -> (bool, u16, Value) {
    let http = client();
    let parse = |text: &str| parse(&text.replace("$handle", handle));
    let request = match act {
        Act::Call(tool, args, id) => http
            .post(s.url(&format!("/v1/tools/{tool}/call")))
            .json(&json!({"args": parse(args), "correlation_id": id})),
        Act::Repeat(n, tool, args, id) => {
            for _ in 1..n {
                Box::pin(self::act(s, who, Act::Call(tool, args, id), handle)).await;
            }
            return Box::pin(self::act(s, who, Act::Call(tool, args, id), handle)).await;
        }
        Act::Tight(n, tool, args, id) => {
            let tight = || {
                let body = json!({"args": parse(args), "correlation_id": id,
                                  "policy": {"timeout_ms": 5}});
                http.post(s.url(&format!("/v1/tools/{tool}/call")))
                    .json(&body)
            };
            for _ in 1..n {
                tight().bearer_auth(who.token()).send().await.unwrap();
            }
            tight()
        }
        Act::Plan(plan) => http.post(s.url("/v1/runs?wait=true")).json(&parse(plan)),
        Act::History(id) => http.get(s.url(&format!("/v1/history/{id}"))),
        Act::Runs => http.get(s.url("/v1/runs")),
        Act::Keyed(key, message) => http
            .post(s.url("/v1/tools/echo/call"))
            .header("idempotency-key", key)
            .json(&json!({"args": {"message": message}})),
    };
    let r = request.bearer_auth(who.token()).send().await.unwrap();
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or_default();
    let result = body.get("result").unwrap_or(&body);
    let ok = status < 300
        && result["success"] != false
        && result["status"].as_str().is_none_or(|s| s == "succeeded");
    (ok, status, body)
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("the table's JSON {text:?}: {e}"))
}

/// Do `step`; why its answer is not what it expects, if it is not. A
/// browser session it opens becomes `handle`.
async fn run(s: &Served, step: &Step, handle: &mut String) -> Option<String> {
    let (ok, status, body) = act(s, step.0, step.1, handle).await;
    if let Some(opened) = body.pointer("/result/data/session").and_then(Value::as_str) {
        *handle = opened.to_string();
    }
    let text = body.to_string();
    let code = body
        .pointer("/result/error/code")
        .or_else(|| body.pointer("/error/code"))
        .and_then(Value::as_str);
    let fine = match step.2 {
        Expect::Ok => ok,
        Expect::Code(want) => !ok && code == Some(want),
        Expect::Status(want) => status == want,
        Expect::Holds(has, not) => {
            let has = has.replace("$handle", handle);
            let not = not.replace("$handle", handle);
            text.contains(&has) && (not.is_empty() || !text.contains(&not))
        }
    };
    (!fine).then(|| {
        format!(
            "{:?} {:?}: wanted {:?}, got {status} {text}",
            step.0, step.1, step.2
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_tenant_reads_spoils_or_squats_on_another_tenants_things() {
    let s = Served::start_with(CONFIG, &ENV);
    let mut failed = Vec::new();
    for row in MATRIX {
        let mut handle = String::new();
        let mut why = None;
        for step in row.setup {
            if let Some(e) = run(&s, step, &mut handle).await {
                why = Some(format!("setup: {e}"));
                break;
            }
        }
        if why.is_none() {
            why = run(&s, &row.attack, &mut handle)
                .await
                .map(|e| format!("attack: {e}"));
        }
        if why.is_none() {
            for step in row.after {
                if let Some(e) = run(&s, step, &mut handle).await {
                    why = Some(format!("afterwards: {e}"));
                    break;
                }
            }
        }
        if let Some(why) = why {
            failed.push(format!("{} × {}: {why}", row.resource, row.op));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} rows failed:\n{}",
        failed.len(),
        MATRIX.len(),
        failed.join("\n")
    );
}
