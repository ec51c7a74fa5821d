//! The store on PostgreSQL (`[store] url = "postgres://…"`): the tables and
//! queries of the SQLite store, shared by every server replica, so that history
//! is one, a run's checkpoints are seen by the replica that takes it over, and
//! an idempotency key answers once across the cluster. History writes are
//! batched by the same writer task as SQLite's (one transaction per batch).
//! This file connects and migrates; each role's statements are in the
//! role's file, beside SQLite's.

use std::str::FromStr;
use std::time::Duration;

use axon_core::StoreError;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use crate::batches::PgBatches;
use crate::{Owner, Retention, Writer};

/// How long opening the store waits for a connection: a database that cannot
/// be reached stops `axon serve` at start-up (exit 3) instead of hanging.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// History and runs in a PostgreSQL database, shared by the replicas that
/// open it. See [`SqliteStore`](crate::SqliteStore) for the writer's contract
/// (group commit, durability, reads see their own writes): it is the same.
pub struct PgStore {
    pub(crate) pool: PgPool,
    pub(crate) target: String,
    pub(crate) retention: Retention,
    pub(crate) writer: Writer,
    pub(crate) owner: Owner,
    pub(crate) handoff: bool,
}

impl PgStore {
    /// Connect to `url` (`postgres://user@host:port/db`), in `schema` when
    /// given (created if missing: several deployments, or tests, share one
    /// database that way), apply migrations (replicas starting together apply
    /// them once: sqlx holds an advisory lock) and prune by the retention rules.
    pub async fn open(
        url: &str,
        schema: Option<&str>,
        retention: Retention,
    ) -> Result<PgStore, StoreError> {
        let mut options = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::unavailable_with(format!("store url: {e}"), e))?;
        // No user in the URL: libpq's rule is PGUSER, then the OS user (sqlx
        // does the same, but says "anonymous" where the OS user cannot be
        // looked up); then $USER, else a clear error instead of a role that
        // does not exist.
        if !names_user(url) && std::env::var_os("PGUSER").is_none() {
            let os = options.get_username().to_string();
            if matches!(os.as_str(), "" | "anonymous" | "unknown") {
                let user = std::env::var("USER")
                    .or_else(|_| std::env::var("LOGNAME"))
                    .map_err(|_| {
                        StoreError::unavailable(
                            "store url: no user in it, PGUSER is not set and the OS user cannot be looked up; name one: postgres://USER@host:5432/db",
                        )
                    })?;
                options = options.username(&user);
            }
        }
        let target = format!(
            "postgres://{}:{}/{}{}",
            options.get_host(),
            options.get_port(),
            options.get_database().unwrap_or(options.get_username()),
            schema.map(|s| format!(" (schema {s})")).unwrap_or_default(),
        );
        if let Some(schema) = schema {
            if schema.is_empty()
                || !schema
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return Err(StoreError::unavailable(format!(
                    "store schema {schema:?}: letters, digits and _ only"
                )));
            }
            options = options.options([("search_path", schema)]);
        }
        let cannot =
            |e: sqlx::Error| StoreError::unavailable_with(format!("cannot open {target}: {e}"), e);
        let pool = PgPoolOptions::new()
            .max_connections(8)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(cannot)?;
        if let Some(schema) = schema {
            // Checked above: an identifier.
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "CREATE SCHEMA IF NOT EXISTS {schema}"
            )))
            .execute(&pool)
            .await
            .or_else(|e| match e.as_database_error() {
                // Two replicas creating it at once: the loser finds it there.
                Some(d) if d.is_unique_violation() => Ok(Default::default()),
                _ => Err(e),
            })
            .map_err(cannot)?;
        }
        sqlx::migrate!("./migrations/postgres")
            .run(&pool)
            .await
            .map_err(|e| {
                StoreError::unavailable_with(format!("cannot migrate {target}: {e}"), e)
            })?;
        crate::pruning::postgres(&pool, &retention).await?;
        Ok(PgStore {
            writer: Writer::start(
                PgBatches {
                    pool: pool.clone(),
                    keep: retention.max_per_correlation,
                },
                retention,
            ),
            pool,
            target,
            retention,
            owner: Owner::this_process(),
            handoff: false,
        })
    }

    /// When `record` returns: after the commit (`Sync`, the default) or once
    /// queued (`Async`).
    pub fn with_durability(mut self, durability: crate::Durability) -> Self {
        self.writer.durability = durability;
        self
    }

    /// Runs begun through this store may be taken up by another replica when
    /// this one stops running them ([`RunQueue::pending_runs`](axon_store_roles::RunQueue::pending_runs)).
    pub fn with_handoff(mut self, handoff: bool) -> Self {
        self.handoff = handoff;
        self
    }
}

/// Whether a PostgreSQL URL names its user (`postgres://user@host/db` or
/// `?user=`).
fn names_user(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    authority.contains('@') || rest.contains("?user=") || rest.contains("&user=")
}

#[cfg(test)]
mod url_tests {
    #[test]
    fn a_url_names_its_user_in_the_authority_or_the_query() {
        assert!(super::names_user("postgres://postgres@127.0.0.1:5432/test"));
        assert!(super::names_user("postgres://127.0.0.1/test?user=ada"));
        assert!(super::names_user(
            "postgres://127.0.0.1/test?sslmode=disable&user=ada"
        ));
        assert!(!super::names_user("postgres://127.0.0.1:5432/db"));
        assert!(!super::names_user("postgres://127.0.0.1/a@b"));
    }
}
