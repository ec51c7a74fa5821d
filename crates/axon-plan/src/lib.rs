//! # axon-plan
//!
//! Multi-step plans (docs/design.md, "Plans"): a DAG of tool calls whose steps
//! feed each other through templates. Parse ([`Plan::parse`]), validate
//! ([`validate`]), then run ([`PlanRunner::run`]): each step starts the moment its
//! dependencies are done, within `max_parallel` and each tool's `max_concurrent`,
//! longest remaining path first; each call goes through the core executor's
//! pipeline; every finished step is checkpointed so a run resumes after a crash.

#![warn(missing_docs)]

pub mod graph;
pub mod idempotency;
pub mod plan;
pub mod replay;
pub mod result;
pub mod run;
pub mod secrets;
pub mod store;
pub mod template;
pub mod validate;

pub use graph::{GraphFormat, render as render_graph};
pub use idempotency::{Idempotency, IdempotencyBegin};
pub use plan::{DEFAULT_MAX_PARALLEL, Fallback, ParseError, Plan, Step, StepRef};
pub use replay::{Compiled, Kept, compile as compile_replay};
pub use result::{PlanResult, RunStatus, StepOutcome, StepStatus};
pub use run::{PlanEvent, PlanRunner, RunOptions};
pub use secrets::{SecretError, SecretSource, Secrets};
pub use store::{Claim, InMemoryRunStore, RunRecord, RunStore, complete_result};
pub use template::TemplateError;
pub use validate::{Graph, PlanErrors, PlanProblem, validate};
