//! Approval (crate::approval), on tokio's paused clock: a call whose policy
//! asks for a person is parked before its first attempt and runs only once
//! approved (with the approver's edited arguments, validated again); a denial
//! and a deadline each fail with their kind and the tool never runs; a caller
//! cannot waive what the tool requires.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::approval::{ApprovalStatus, Decision};
use axon_core::{ErrorKind, Executor, PolicyState, ToolCall, ToolError, ToolRegistry, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct Payment {
    to: String,
    #[schemars(range(min = 1, max = 1000))]
    cents: u32,
    /// Shown masked to the approver.
    #[serde(default)]
    api_key: String,
}

/// A `pay` tool that counts its runs and keeps the last arguments, and a
/// read-only `balance`.
/// The last payment `pay` made: to whom, how much, with which key.
type LastPayment = Arc<Mutex<Option<(String, u32, String)>>>;

fn bank(policy: Value) -> (Executor, Arc<AtomicU32>, LastPayment) {
    let runs = Arc::new(AtomicU32::new(0));
    let last = Arc::new(Mutex::new(None));
    let mut registry = ToolRegistry::new();
    let (r, l) = (runs.clone(), last.clone());
    registry
        .register(
            tool_fn("pay", "Pays someone", move |p: Payment, _ctx| {
                let (r, l) = (r.clone(), l.clone());
                async move {
                    r.fetch_add(1, Ordering::SeqCst);
                    *l.lock().unwrap() = Some((p.to.clone(), p.cents, p.api_key.clone()));
                    Ok::<_, ToolError>(json!({"paid": p.cents}))
                }
            })
            .not_idempotent(),
        )
        .unwrap();
    registry
        .register(
            tool_fn(
                "balance",
                "Reads the balance",
                |_: Value, _ctx| async move { Ok::<_, ToolError>(json!({"cents": 5})) },
            )
            .read_only(),
        )
        .unwrap();
    let executor = Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(policy)
        .build()
        .unwrap();
    (executor, runs, last)
}

/// The id of the one pending approval, once the call is parked.
async fn pending(executor: &Executor) -> String {
    for _ in 0..100 {
        let list = executor.approvals().list(true, 10).await.unwrap();
        if let Some(first) = list.first() {
            return first.id.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no call was parked");
}

fn decide(approve: bool, args: Option<Value>) -> Decision {
    Decision {
        approve,
        by: "ana".into(),
        comment: (!approve).then(|| "not this month".into()),
        args,
    }
}

#[tokio::test(start_paused = true)]
async fn a_required_call_waits_for_approval_then_runs_once() {
    let (executor, runs, _) = bank(json!({"approval": "required"}));
    let call = ToolCall::new(
        "pay",
        json!({"to": "bob", "cents": 300, "api_key": "sk-live-1234"}),
    );
    let running = tokio::spawn({
        let executor = executor.clone();
        async move { executor.call(call).await }
    });
    let id = pending(&executor).await;
    let parked = executor.approvals().get(&id).await.unwrap().unwrap();
    assert_eq!(parked.tool, "pay");
    assert_eq!(
        parked.args["api_key"], "***",
        "a person is not shown secrets"
    );
    assert_eq!(parked.args["cents"], 300);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "parked before its first attempt"
    );

    executor
        .approvals()
        .decide(&id, &decide(true, None))
        .await
        .unwrap();
    let result = running.await.unwrap();
    assert!(result.success, "{:?}", result.error);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let note = result.approval.expect("the decision is in the result");
    assert_eq!(note.status, ApprovalStatus::Approved);
    assert_eq!(note.by.as_deref(), Some("ana"));
    assert!(!note.args_edited);
    // A second decision does not change the first.
    assert!(
        executor
            .approvals()
            .decide(&id, &decide(false, None))
            .await
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn a_denied_call_fails_approval_denied_and_never_runs() {
    let (executor, runs, _) = bank(json!({"approval": "required"}));
    let running = tokio::spawn({
        let executor = executor.clone();
        async move {
            executor
                .call(ToolCall::new("pay", json!({"to": "bob", "cents": 3})))
                .await
        }
    });
    let id = pending(&executor).await;
    executor
        .approvals()
        .decide(&id, &decide(false, None))
        .await
        .unwrap();
    let result = running.await.unwrap();
    let error = result.error.expect("denied");
    assert_eq!(error.kind, ErrorKind::ApprovalDenied);
    assert!(
        error
            .message
            .contains("ana denied the call: not this month"),
        "{}",
        error.message
    );
    assert_eq!(result.attempts, 0, "nothing was attempted");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn nobody_deciding_before_the_deadline_fails_approval_timeout() {
    let (executor, runs, _) = bank(json!({"approval": "required", "approval_timeout_ms": 60_000}));
    let started = tokio::time::Instant::now();
    let result = executor
        .call(ToolCall::new("pay", json!({"to": "bob", "cents": 3})))
        .await;
    assert_eq!(result.error.unwrap().kind, ErrorKind::ApprovalTimeout);
    assert_eq!(started.elapsed(), Duration::from_secs(60));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let expired = executor.approvals().list(false, 10).await.unwrap();
    assert_eq!(expired[0].status, ApprovalStatus::Expired);
    // Too late: the deadline decided.
    assert!(
        executor
            .approvals()
            .decide(&expired[0].id, &decide(true, None))
            .await
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn edited_arguments_are_validated_then_used() {
    let (executor, runs, last) = bank(json!({"approval": "required"}));
    let call = |cents| ToolCall::new("pay", json!({"to": "bob", "cents": cents}));

    let running = tokio::spawn({
        let (executor, call) = (executor.clone(), call(900));
        async move { executor.call(call).await }
    });
    let id = pending(&executor).await;
    let edit = json!({"to": "bob", "cents": 5000});
    executor
        .approvals()
        .decide(&id, &decide(true, Some(edit)))
        .await
        .unwrap();
    let refused = running.await.unwrap().error.unwrap();
    assert_eq!(refused.kind, ErrorKind::InvalidArguments);
    assert!(refused.message.contains("/cents"), "{}", refused.message);
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let running = tokio::spawn({
        let (executor, call) = (executor.clone(), call(900));
        async move { executor.call(call).await }
    });
    let id = loop {
        let list = executor.approvals().list(true, 10).await.unwrap();
        if let Some(first) = list.first() {
            break first.id.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let edit = json!({"to": "bob", "cents": 90});
    executor
        .approvals()
        .decide(&id, &decide(true, Some(edit)))
        .await
        .unwrap();
    let result = running.await.unwrap();
    assert!(result.success, "{:?}", result.error);
    assert!(result.approval.unwrap().args_edited);
    assert_eq!(
        *last.lock().unwrap(),
        Some(("bob".into(), 90, String::new()))
    );
}

/// Issue 59: the approver is shown `api_key: "***"`; an edit that leaves it
/// so runs with the call's real key, never the mask sent upstream. Seen
/// before the fix: the tool was paid with the key `***`.
#[tokio::test(start_paused = true)]
async fn an_edit_that_leaves_a_secret_masked_runs_with_the_real_value() {
    let (executor, _, last) = bank(json!({"approval": "required"}));
    let call = ToolCall::new(
        "pay",
        json!({"to": "bob", "cents": 300, "api_key": "sk-live-1234"}),
    );
    let running = tokio::spawn({
        let executor = executor.clone();
        async move { executor.call(call).await }
    });
    let id = pending(&executor).await;
    let mut edit = executor.approvals().get(&id).await.unwrap().unwrap().args;
    assert_eq!(edit["api_key"], "***");
    edit["cents"] = json!(200);
    executor
        .approvals()
        .decide(&id, &decide(true, Some(edit)))
        .await
        .unwrap();
    let result = running.await.unwrap();
    assert!(result.success, "{:?}", result.error);
    assert_eq!(
        *last.lock().unwrap(),
        Some(("bob".into(), 200, "sk-live-1234".into()))
    );
}

#[tokio::test(start_paused = true)]
async fn auto_asks_for_tools_that_may_change_things_only() {
    let (executor, runs, _) = bank(json!({"approval": "auto", "approval_timeout_ms": 1000}));
    let read = executor.call(ToolCall::new("balance", json!({}))).await;
    assert!(read.success && read.approval.is_none());
    let pay = executor
        .call(ToolCall::new("pay", json!({"to": "bob", "cents": 3})))
        .await;
    assert_eq!(pay.error.unwrap().kind, ErrorKind::ApprovalTimeout);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// The attack: a caller (an API client, a plan step) waives the approval the
/// tool's configuration requires.
#[tokio::test(start_paused = true)]
async fn a_caller_cannot_waive_approval_but_can_ask_for_it() {
    let (executor, runs, _) = bank(json!({"approval": "required", "approval_timeout_ms": 1000}));
    for waiver in ["never", "auto"] {
        let result = executor
            .call(
                ToolCall::new("pay", json!({"to": "bob", "cents": 3}))
                    .policy(json!({"approval": waiver})),
            )
            .await;
        let error = result.error.unwrap();
        assert_eq!(error.kind, ErrorKind::InvalidArguments, "{waiver}");
        assert_eq!(error.code.as_deref(), Some("invalid_policy"));
        assert!(error.message.contains("approval"), "{}", error.message);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let (open, _, _) = bank(json!({}));
    let asked = open
        .call(
            ToolCall::new("balance", json!({}))
                .policy(json!({"approval": "required", "approval_timeout_ms": 500})),
        )
        .await;
    assert_eq!(asked.error.unwrap().kind, ErrorKind::ApprovalTimeout);
}
