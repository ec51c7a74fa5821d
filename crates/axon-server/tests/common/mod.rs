//! What axon-server's tests share: a server over a store of its own, with
//! the utility tools, driven in process.

use std::sync::Arc;

use axon_core::{Executor, ToolRegistry};
use axon_plan::PlanRunner;
use axon_server::{Server, ServerOptions};
use axon_store::{Retention, SqliteStore, Store};

/// A server with `options` over a new SQLite file in the temp dir.
pub async fn server(options: ServerOptions) -> Server {
    let path = std::env::temp_dir().join(format!("axon-server-test-{}.db", ulid::Ulid::new()));
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open(&path, Retention::default())
            .await
            .expect("a store in the temp dir"),
    );
    let executor = Executor::builder(ToolRegistry::with_utilities())
        .history(store.clone())
        .build()
        .expect("an executor");
    Server::new(PlanRunner::new(executor), store, options)
}
