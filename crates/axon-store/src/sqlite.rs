//! The embedded default: history, runs and the rest in one SQLite file, in
//! WAL mode, with the migrations in `migrations/sqlite/` applied when it is
//! opened. This file opens and migrates it; each role's statements are in
//! the role's file (`history.rs`, `runs.rs`, `queue.rs`, …), beside
//! PostgreSQL's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use axon_core::StoreError;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection};

use crate::batches::{SqliteBatches, fifo_trigger};
use crate::{Durability, Owner, Retention, Writer, err};

/// History and runs in one SQLite file.
///
/// History writes go through one writer task that commits whatever has queued up
/// in a single transaction (group commit), so under load one commit carries
/// hundreds of calls. With [`Durability::Sync`] (the default) `record` returns
/// once its row is committed; with `Async` once it is queued (the queue is
/// bounded: a writer that falls behind slows callers down rather than losing
/// rows). Every read of history first waits for the rows queued before it, so a
/// caller always reads its own writes, and [`close`](axon_store_roles::Upkeep::close) commits
/// everything queued. A call that ran a plan step checkpoints the step in the
/// same transaction as its history row.
pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    pub(crate) path: PathBuf,
    pub(crate) retention: Retention,
    pub(crate) writer: Writer,
    pub(crate) owner: Owner,
    pub(crate) handoff: bool,
}

impl SqliteStore {
    /// Open (creating it and its folder if needed) the store at `path`, apply
    /// migrations and prune by the retention rules.
    pub async fn open(
        path: impl AsRef<Path>,
        retention: Retention,
    ) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::unavailable_with(format!("cannot create {}: {e}", dir.display()), e)
            })?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(OPEN_TIMEOUT);
        into_wal(&options, path).await?;
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options.clone())
            .await
            .map_err(|e| {
                StoreError::unavailable_with(format!("cannot open {}: {e}", path.display()), e)
            })?;
        // Two processes opening a new file at once (`axon run` and `axon history`)
        // race to apply the same migration; the loser finds it applied when it
        // looks again.
        let mut tries = 0;
        loop {
            match sqlx::migrate!("./migrations/sqlite").run(&pool).await {
                Ok(()) => break,
                Err(_) if tries < 5 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(20 * tries)).await;
                }
                Err(e) => {
                    return Err(StoreError::unavailable(format!(
                        "cannot migrate {}: {e}",
                        path.display()
                    )));
                }
            }
        }
        let mut first = pool.acquire().await.map_err(err)?;
        crate::pruning::sqlite(&mut first, &retention).await?;
        drop(first);
        // The writer keeps a connection of its own: its page cache stays warm
        // instead of being invalidated by writes from other pooled connections.
        let mut connection = options
            .clone()
            .pragma("cache_size", "-16000")
            .connect()
            .await
            .map_err(|e| {
                StoreError::unavailable_with(format!("cannot open {}: {e}", path.display()), e)
            })?;
        // Safe: the only value in the text is an integer it formats itself.
        sqlx::raw_sql(sqlx::AssertSqlSafe(fifo_trigger(
            retention.max_per_correlation,
        )))
        .execute(&mut connection)
        .await
        .map_err(|e| {
            StoreError::unavailable_with(format!("cannot open {}: {e}", path.display()), e)
        })?;
        Ok(SqliteStore {
            pool,
            path: path.to_path_buf(),
            retention,
            writer: Writer::start(SqliteBatches(Some(connection)), retention),
            owner: Owner::this_process(),
            handoff: false,
        })
    }

    /// Runs begun through this store may be taken up by another process when
    /// this one stops running them ([`RunQueue::pending_runs`](axon_store_roles::RunQueue::pending_runs)): what a server
    /// replica in a cluster sets. Off by default, so a run stopped by Ctrl-C
    /// waits for its user.
    pub fn with_handoff(mut self, handoff: bool) -> Self {
        self.handoff = handoff;
        self
    }

    /// When `record` returns: after the commit (`Sync`, the default) or once
    /// queued (`Async`).
    pub fn with_durability(mut self, durability: Durability) -> Self {
        self.writer.durability = durability;
        self
    }
}

/// How long opening waits for other processes holding the file.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);

/// Put the file in WAL mode (kept in the file, so the connections opened after
/// need not ask). Turning a file to WAL takes a lock SQLite's busy timeout
/// does not wait on, so two processes opening a new file at once (`axon run`
/// and `axon history`) would see "database is locked": the loser waits and
/// asks again, up to [`OPEN_TIMEOUT`].
async fn into_wal(options: &SqliteConnectOptions, path: &Path) -> Result<(), StoreError> {
    let cannot = |e: sqlx::Error| {
        StoreError::unavailable_with(format!("cannot open {}: {e}", path.display()), e)
    };
    let deadline = tokio::time::Instant::now() + OPEN_TIMEOUT;
    let mut pause = Duration::from_millis(5);
    loop {
        let tried = async {
            let mut connection = options.connect().await?;
            let mode: String = sqlx::query_scalar("PRAGMA journal_mode = WAL")
                .fetch_one(&mut connection)
                .await?;
            connection.close().await?;
            Ok::<_, sqlx::Error>(mode)
        }
        .await;
        match tried {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(StoreError::unavailable(format!(
                    "cannot open {}: it stays in journal mode {mode}, not WAL",
                    path.display()
                )));
            }
            Err(e) if is_busy(&e) && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            Err(e) => return Err(cannot(e)),
        }
    }
}

/// SQLite's "database is locked" (`SQLITE_BUSY` and its extended codes).
fn is_busy(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .and_then(|code| code.parse::<i32>().ok())
        .is_some_and(|code| code & 0xff == 5)
}
