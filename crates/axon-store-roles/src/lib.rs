//! # axon-store-roles
//!
//! What each consumer asks of Axon's durable store, one trait per role, and
//! the records the roles answer with. No database driver: `axon-store`
//! implements every role for SQLite and PostgreSQL, and the crates that only
//! *use* a store (the HTTP server) link this one, not sqlx.
//!
//! A role's trait lives with its first consumer where that crate sits below
//! the store: call history ([`HistoryStore`]) and approvals
//! ([`ApprovalStore`]) in `axon-core`, runs ([`RunStore`]) and idempotency
//! keys ([`Idempotency`]) in `axon-plan`. The roles whose consumers sit above
//! the store (the server, the CLI) live here, one file each: the run queue
//! (`queue.rs`), the runs listing (`listing.rs`), figures (`figures.rs`),
//! health (`health.rs`), the opener's upkeep (`upkeep.rs`), MCP pins
//! (`pins.rs`) and browser_act's cache (`act_cache.rs`).
//!
//! [`Stores`] is one store seen through its roles: what `axon` opens, and
//! hands each consumer the role it needs.

#![warn(missing_docs)]

mod act_cache;
mod figures;
mod health;
mod listing;
mod pins;
mod queue;
mod upkeep;

use std::sync::Arc;

pub use act_cache::{ACT_CACHE_ENTRIES, ActRows};
pub use axon_core::HistoryStore;
pub use axon_core::approval::ApprovalStore;
pub use axon_plan::{Idempotency, IdempotencyBegin, RunStore};
pub use figures::{RECENT_LATENCY_ROWS, RecentLatencies, ToolFigures, ToolStats};
pub use health::Health;
pub use listing::{RunFilter, RunListing, RunQuery, RunSummary};
pub use pins::PinRows;
pub use queue::{RunHold, RunQueue};
pub use upkeep::Upkeep;

/// One store seen through its roles, each an `Arc` of the same store: the
/// opener (the CLI) holds this, and gives each consumer only the roles it
/// uses (the executor its history, the plan runner its runs and keys, the
/// server its queue, listing, figures, health and pins).
#[derive(Clone)]
pub struct Stores {
    /// Call history.
    pub history: Arc<dyn HistoryStore>,
    /// Plan runs and their checkpoints.
    pub runs: Arc<dyn RunStore>,
    /// Idempotency keys (plan steps, HTTP calls).
    pub keys: Arc<dyn Idempotency>,
    /// Calls parked for approval.
    pub approvals: Arc<dyn ApprovalStore>,
    /// Imported MCP tools' pins.
    pub pins: Arc<dyn PinRows>,
    /// browser_act's translated steps.
    pub act_cache: Arc<dyn ActRows>,
    /// Runs waiting for a server replica.
    pub queue: Arc<dyn RunQueue>,
    /// Runs listed a page at a time.
    pub listing: Arc<dyn RunListing>,
    /// Per-tool figures.
    pub figures: Arc<dyn ToolFigures>,
    /// Recent durations, to seed latency sketches.
    pub latencies: Arc<dyn RecentLatencies>,
    /// Whether it works, and where it is.
    pub health: Arc<dyn Health>,
    /// Pruning, flushing, closing.
    pub upkeep: Arc<dyn Upkeep>,
}

impl Stores {
    /// Every role of `store`.
    pub fn of<S>(store: Arc<S>) -> Stores
    where
        S: HistoryStore
            + RunStore
            + Idempotency
            + ApprovalStore
            + PinRows
            + ActRows
            + RunQueue
            + RunListing
            + ToolFigures
            + RecentLatencies
            + Health
            + Upkeep,
    {
        Stores {
            history: store.clone(),
            runs: store.clone(),
            keys: store.clone(),
            approvals: store.clone(),
            pins: store.clone(),
            act_cache: store.clone(),
            queue: store.clone(),
            listing: store.clone(),
            figures: store.clone(),
            latencies: store.clone(),
            health: store.clone(),
            upkeep: store,
        }
    }
}
