//! Idempotency keys: a request sent again under the key of an earlier one
//! gets the earlier one's answer instead of running twice. Two consumers ask
//! for them, plan steps with an `idempotency_key` (`run.rs`) and HTTP calls
//! with an `Idempotency-Key` header (`axon-server`), so the role lives here,
//! under both; [`InMemoryRunStore`](crate::InMemoryRunStore) keeps keys for a
//! process and `axon-store` keeps them in SQLite or PostgreSQL.

use async_trait::async_trait;
use axon_core::StoreError;

/// What [`Idempotency::idempotency_begin`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotencyBegin {
    /// No request with this key: this one runs.
    New,
    /// The first request's answer (JSON), to send again.
    Replay(String),
    /// The first request is still running.
    InFlight,
    /// The key was used for a different request.
    Mismatch,
}

/// Where idempotency keys and their answers are kept.
#[async_trait]
pub trait Idempotency: Send + Sync + 'static {
    /// Claim an idempotency key for a request with `fingerprint` (a digest of
    /// what was asked): [`IdempotencyBegin::New`] when this request is the
    /// first (or an earlier one was abandoned, or is stale); otherwise what the
    /// first one left.
    async fn idempotency_begin(
        &self,
        key: &str,
        fingerprint: &str,
    ) -> Result<IdempotencyBegin, StoreError>;

    /// Keep the answer (JSON) of the request that claimed `key`.
    async fn idempotency_finish(&self, key: &str, result: &str) -> Result<(), StoreError>;

    /// Give up a claim without an answer (the request went away or failed):
    /// the next request with the key runs.
    async fn idempotency_abandon(&self, key: &str) -> Result<(), StoreError>;
}
