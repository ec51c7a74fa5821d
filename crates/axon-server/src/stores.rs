//! The roles of the store the server's handlers use, and only those: a
//! handler cannot reach a method its route does not need (the executor has
//! the history and approvals, the plan runner the runs and step keys).

use std::sync::Arc;

use axon_plan::Idempotency;
use axon_store_roles::{Health, PinRows, RunListing, RunQueue, Stores, ToolFigures};

/// What `AppState` holds of the store.
pub(crate) struct ServerStores {
    /// `Idempotency-Key` on `POST /v1/tools/{name}/call`.
    pub(crate) keys: Arc<dyn Idempotency>,
    /// `GET /v1/tools/{name}`, `GET /v1/pins`, `POST …/accept`.
    pub(crate) pins: Arc<dyn PinRows>,
    /// `GET /v1/stats`.
    pub(crate) figures: Arc<dyn ToolFigures>,
    /// `/healthz`.
    pub(crate) health: Arc<dyn Health>,
    /// Queued runs, taking over, a run's `running`/`queued` status.
    pub(crate) queue: Arc<dyn RunQueue>,
    /// `GET /v1/runs`.
    pub(crate) listing: Arc<dyn RunListing>,
}

impl ServerStores {
    /// The server's roles of `stores`.
    pub(crate) fn of(stores: &Stores) -> ServerStores {
        ServerStores {
            keys: stores.keys.clone(),
            pins: stores.pins.clone(),
            figures: stores.figures.clone(),
            health: stores.health.clone(),
            queue: stores.queue.clone(),
            listing: stores.listing.clone(),
        }
    }
}
