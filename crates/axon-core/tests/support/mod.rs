//! Test support: a scripted tool whose n-th call does what the test says, and that
//! counts its calls; and executors isolated from the process-wide shared state.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use axon_core::{
    Annotations, ErrorKind, Executor, ExecutorBuilder, PolicyState, Tool, ToolContext, ToolError,
    ToolRegistry, ToolSpec,
};
use futures::future::BoxFuture;
use serde_json::{Value, json};

type Behaviour = dyn Fn(u32, &Value) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync;

/// A tool whose behaviour is a function of its call number (1-based).
pub struct Scripted {
    spec: ToolSpec,
    calls: Arc<AtomicU32>,
    behaviour: Box<Behaviour>,
}

impl Scripted {
    pub fn new<F>(name: &str, behaviour: F) -> (Self, Arc<AtomicU32>)
    where
        F: Fn(u32, &Value) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync + 'static,
    {
        let calls = Arc::new(AtomicU32::new(0));
        let tool = Scripted {
            spec: ToolSpec::new(name, "scripted test tool"),
            calls: calls.clone(),
            behaviour: Box::new(behaviour),
        };
        (tool, calls)
    }

    pub fn annotations(mut self, a: Annotations) -> Self {
        self.spec.annotations = a;
        self
    }

    /// What a call reaches by default (an origin, an MCP server).
    pub fn dependency(mut self, d: axon_core::Dependency) -> Self {
        self.spec.dependency = d;
        self
    }

    pub fn output_schema(mut self, schema: Value) -> Self {
        self.spec.output_schema = Some(schema);
        self
    }
}

#[async_trait]
impl Tool for Scripted {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, args: &Value, _ctx: ToolContext) -> Result<Value, ToolError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        (self.behaviour)(n, args).await
    }
}

pub fn ok(v: Value) -> BoxFuture<'static, Result<Value, ToolError>> {
    Box::pin(async move { Ok(v) })
}

pub fn err(kind: ErrorKind) -> BoxFuture<'static, Result<Value, ToolError>> {
    Box::pin(async move { Err(ToolError::new(kind, "scripted failure")) })
}

pub fn after(ms: u64, v: Value) -> BoxFuture<'static, Result<Value, ToolError>> {
    Box::pin(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(v)
    })
}

/// Registry with the utility tools plus `tools`.
pub fn registry(tools: Vec<Scripted>) -> ToolRegistry {
    let mut r = ToolRegistry::with_utilities();
    for t in tools {
        r.register(t).expect("test tool registers");
    }
    r
}

/// An executor with its own shared state, no jitter and fast backoff, so tests
/// neither see each other nor wait long on the (paused) clock.
pub fn builder(tools: Vec<Scripted>) -> ExecutorBuilder {
    Executor::builder(registry(tools))
        .policy_state(PolicyState::new())
        .rng_seed(7)
        .defaults(
            json!({"retry": {"jitter": "none", "initial_delay_ms": 100, "max_delay_ms": 1000}}),
        )
}

pub fn executor(tools: Vec<Scripted>) -> Executor {
    builder(tools).build().expect("executor builds")
}

pub fn calls(c: &Arc<AtomicU32>) -> u32 {
    c.load(Ordering::SeqCst)
}

/// A token that cancels itself after `ms` (on the test's clock).
pub fn cancel_after(ms: u64) -> axon_core::CancellationToken {
    let token = axon_core::CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        canceller.cancel();
    });
    token
}
