//! The embedded default: history, runs and the rest in one SQLite file, in
//! WAL mode, with the migrations in `migrations/sqlite/` applied when it is
//! opened.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use axon_core::{HistoryEntry, HistoryStats, HistoryStore, StoreError, Timestamp};
use axon_plan::{Claim, Plan};
use sqlx::Row as _;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, SqliteConnection};

use axon_store_roles::{
    Health, RECENT_LATENCY_ROWS, RecentLatencies, RunFilter, RunListing, RunQuery, RunSummary,
    Upkeep,
};

use crate::{
    Batches, CLAIM_STALE_MS, Durability, IDEMPOTENCY_TTL_MS, Owner, Retention, Row, Writer, decode,
    encode, err, history_stats, latencies_of, now_ms, run_summary_of, taken_by,
};

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
    path: PathBuf,
    retention: Retention,
    pub(crate) writer: Writer,
    pub(crate) owner: Owner,
    handoff: bool,
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
        prune(&mut first, &retention).await?;
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

/// The runs waiting for a replica, oldest first: its condition is the
/// partial index `runs_unfinished_handoff`'s, word for word, so that the
/// index is read instead of every run.
pub(crate) const PENDING_RUNS: &str = "SELECT r.run_id, c.host, c.pid, c.heartbeat_ms FROM runs r \
     LEFT JOIN run_claims c ON c.run_id = r.run_id \
     WHERE r.result IS NULL AND r.handoff = 1 ORDER BY r.updated_at_ms LIMIT $1";

#[async_trait]
impl Upkeep for SqliteStore {
    /// Drop history older than `max_age` and beyond `max_calls`.
    async fn prune(&self) -> Result<(), StoreError> {
        self.writer.flush().await?;
        let mut connection = self.pool.acquire().await.map_err(err)?;
        prune(&mut connection, &self.retention).await
    }

    async fn flush(&self) -> Result<(), StoreError> {
        self.writer.flush().await
    }

    /// Commit the history queued so far, then close the pool (flushing the WAL). Records after
    /// this fail.
    async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
    }
}

#[async_trait]
impl Health for SqliteStore {
    async fn check_writable(&self) -> Result<(), StoreError> {
        // Root writes through permission bits, and an open handle writes on after a
        // chmod: so a file made read-only counts as unwritable whoever runs us.
        let meta = std::fs::metadata(&self.path).map_err(|e| {
            StoreError::unavailable_with(format!("{}: {e}", self.path.display()), e)
        })?;
        if meta.permissions().readonly() {
            return Err(StoreError::unavailable(format!(
                "{} is read-only",
                self.path.display()
            )));
        }
        sqlx::query("INSERT OR REPLACE INTO health (id, at_ms) VALUES (1, ?)")
            .bind(now_ms())
            .execute(&self.pool)
            .await
            .map(|_| ())
            .map_err(err)
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
}

#[async_trait]
impl RunListing for SqliteStore {
    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunSummary>, StoreError> {
        // Steps with a checkpoint are in run_steps; the rest (skipped,
        // cancelled) only in the stored result's `steps`.
        let count = |statuses: &str| {
            format!(
                "(SELECT count(*) FROM run_steps s WHERE s.run_id = r.run_id \
                 AND json_extract(s.outcome, '$.status') IN ({statuses})) \
                 + (SELECT count(*) FROM json_each(coalesce(r.result, '{{}}'), '$.steps') j \
                 WHERE json_extract(j.value, '$.status') IN ({statuses}))"
            )
        };
        let sql = format!(
            "SELECT r.run_id, json_extract(r.plan, '$.name') AS name, \
                    json_array_length(r.plan, '$.steps') AS total, \
                    json_extract(r.result, '$.status') AS status, \
                    json_extract(r.result, '$.duration_ms') AS duration_ms, \
                    r.updated_at_ms, {} AS succeeded, {} AS failed, {} AS skipped \
             FROM runs r \
             WHERE (?1 IS NULL OR r.updated_at_ms < ?1) \
               AND (?2 = 0 OR (?2 = 1 AND json_extract(r.result, '$.status') = ?3) \
                    OR (?2 = 2 AND r.result IS NULL)) \
               AND (?5 IS NULL OR r.tenant = ?5) \
             ORDER BY r.updated_at_ms DESC, r.run_id DESC LIMIT ?4",
            count("'succeeded'"),
            count("'failed'"),
            count("'skipped', 'cancelled'"),
        );
        let (mode, status) = match &query.status {
            None => (0, None),
            Some(RunFilter::Ended(status)) => (1, Some(status.as_str())),
            Some(RunFilter::Unfinished) => (2, None),
        };
        // Composed of the constants above only: the values are bound.
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(query.before_ms)
            .bind(mode)
            .bind(status)
            .bind(i64::from(query.limit))
            .bind(query.tenant.as_deref())
            .fetch_all(&self.pool)
            .await
            .map_err(err)?;
        Ok(rows.iter().map(run_summary_of).collect())
    }
}

#[async_trait]
impl RecentLatencies for SqliteStore {
    async fn recent_latencies(
        &self,
        per_tool: u32,
        since_ms: i64,
    ) -> Result<Vec<(String, Vec<u64>)>, StoreError> {
        self.writer.flush().await?;
        // Only the newest rows are read (rowids grow with each insert), so that a
        // process starting over a large history does not scan a day of it.
        let rows = sqlx::query(
            "SELECT tool, duration_ms FROM ( \
                 SELECT tool, duration_ms, started_at_ms, ROW_NUMBER() OVER \
                     (PARTITION BY tool ORDER BY started_at_ms DESC) AS n \
                 FROM calls WHERE rowid > (SELECT max(rowid) FROM calls) - ? \
                     AND started_at_ms >= ? AND success = 1 AND retried = 0) \
             WHERE n <= ? ORDER BY tool, started_at_ms",
        )
        .bind(RECENT_LATENCY_ROWS)
        .bind(since_ms)
        .bind(i64::from(per_tool))
        .fetch_all(&self.pool)
        .await
        .map_err(err)?;
        Ok(latencies_of(rows.iter().map(|row| {
            (
                row.get::<String, _>("tool"),
                row.get::<i64, _>("duration_ms"),
            )
        })))
    }
}

/// Drop history older than `max_age` and beyond `max_calls`.
async fn prune(db: &mut SqliteConnection, retention: &Retention) -> Result<(), StoreError> {
    for (statement, parameter) in prune_statements(retention) {
        sqlx::query(statement)
            .bind(parameter)
            .execute(&mut *db)
            .await
            .map_err(err)?;
    }
    Ok(())
}

/// The statements that apply the retention rules, each with its one parameter.
fn prune_statements(retention: &Retention) -> Vec<(&'static str, i64)> {
    let now = now_ms();
    let cutoff = |age: Duration| {
        SystemTime::now()
            .checked_sub(age)
            .map(|t| Timestamp(t).unix_ms() as i64)
            .unwrap_or(0)
    };
    let mut statements = Vec::with_capacity(6);
    if let Some(age) = retention.max_age {
        statements.push(("DELETE FROM calls WHERE started_at_ms < ?", cutoff(age)));
    }
    if retention.max_calls > 0 {
        // Rowids grow with each insert, so the newest `max_calls` rows lie within
        // `max_calls` of the largest: an index probe instead of a scan of the table
        // (gaps left by FIFO trimming only make it keep fewer).
        statements.push((
            "DELETE FROM calls WHERE rowid <= (SELECT max(rowid) FROM calls) - ?",
            retention.max_calls as i64,
        ));
    }
    // Idempotency keys past the replay window.
    statements.push((
        "DELETE FROM idempotency WHERE created_at_ms < ?",
        now - IDEMPOTENCY_TTL_MS,
    ));
    // Claims a killed process left behind (nothing beats for them) go after an
    // hour, so their runs can be pruned.
    statements.push((
        "DELETE FROM run_claims WHERE heartbeat_ms < ?",
        now - 3_600_000,
    ));
    // Runs: by age, then by count (their checkpoints go with them). A run being
    // executed is never pruned: its claim is held.
    if let Some(age) = retention.max_age {
        statements.push((
            "DELETE FROM runs WHERE updated_at_ms < ? AND run_id NOT IN (SELECT run_id FROM run_claims)",
            cutoff(age),
        ));
    }
    if retention.max_runs > 0 {
        statements.push((
            "DELETE FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_claims) AND run_id IN \
             (SELECT run_id FROM runs ORDER BY updated_at_ms DESC LIMIT -1 OFFSET ?)",
            retention.max_runs as i64,
        ));
    }
    statements
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

/// The SQLite writer's own connection (taken when it closes).
struct SqliteBatches(Option<SqliteConnection>);

impl SqliteBatches {
    fn connection(&mut self) -> Result<&mut SqliteConnection, StoreError> {
        self.0
            .as_mut()
            .ok_or_else(|| StoreError::unavailable("the store is closed"))
    }
}

#[async_trait]
impl Batches for SqliteBatches {
    async fn insert(&mut self, rows: &[&Row]) -> Result<(), StoreError> {
        // The trim is the writer connection's trigger (`fifo_trigger`).
        insert_batch(self.connection()?, rows).await
    }
    async fn prune(&mut self, retention: &Retention) -> Result<(), StoreError> {
        prune(self.connection()?, retention).await
    }
    async fn close(&mut self) {
        if let Some(connection) = self.0.take() {
            let _ = connection.close().await;
        }
    }
}

/// The FIFO trim of a named group, done by the `INSERT` itself: a trigger
/// on the writer's own connection (`TEMP`: it lives and dies with that
/// connection, so each process trims by its own `max_per_correlation`, and
/// the file's schema is untouched). After a row whose correlation id is not
/// its own call id (a call given none is its own group, which holds that one
/// call until a later call names it, and that call's row trims it), the rows
/// of its owner at or below the group's `keep`-th newest go (another owner's
/// calls under the same id are another group), found by stepping `keep`
/// entries down the (correlation_id, owner, rowid) index, so a row costs the same
/// however full its group is. In the `INSERT`'s statement, a batch of an MCP
/// session's calls is one statement in autocommit: no `BEGIN`, trim and
/// `COMMIT` to send to SQLite's thread and hear back from one by one.
fn fifo_trigger(keep: u64) -> String {
    format!(
        "CREATE TEMP TRIGGER calls_fifo AFTER INSERT ON main.calls \
         WHEN NEW.correlation_id <> NEW.call_id \
         BEGIN \
             DELETE FROM calls WHERE correlation_id = NEW.correlation_id AND owner = NEW.owner \
                 AND rowid <= (SELECT rowid FROM calls WHERE correlation_id = NEW.correlation_id \
                  AND owner = NEW.owner ORDER BY rowid DESC LIMIT 1 OFFSET {}); \
         END",
        keep.max(1)
    )
}

/// One batch in one round trip to SQLite's thread: the rows (each trimming
/// its named group, [`fifo_trigger`]) and the checkpoints they carry, as one
/// multi-statement query (sqlx binds `?` parameters across its statements in
/// order). A batch with checkpoints is wrapped in `BEGIN` … `COMMIT` inside
/// that same query, so it stays atomic without extra round trips; one
/// without is a single `INSERT`, atomic on its own (its trims included).
async fn insert_batch(connection: &mut SqliteConnection, rows: &[&Row]) -> Result<(), StoreError> {
    let transaction = rows.iter().any(|r| r.checkpoint.is_some());
    let mut q = sqlx::QueryBuilder::new(if transaction { "BEGIN; " } else { "" });
    q.push(
        "INSERT OR REPLACE INTO calls (call_id, correlation_id, owner, tool, success, retried, duration_ms, started_at_ms, entry) ",
    );
    q.push_values(rows, |mut b, r| {
        b.push_bind(r.call_id.as_str())
            .push_bind(r.correlation_id.as_str())
            .push_bind(r.owner.as_str())
            .push_bind(r.tool.as_str())
            .push_bind(r.success)
            .push_bind(r.retried)
            .push_bind(r.duration_ms)
            .push_bind(r.started_at_ms)
            .push_bind(&r.entry);
    });
    // Checkpoints of the plan steps these calls ran, in the same transaction: a
    // step whose call is in history is never run again on resume. A run the
    // store does not know (its runner keeps runs elsewhere) gets none. (Only
    // `?` parameters: a numbered one would count from the query's first.)
    for (run_id, index, outcome) in rows.iter().filter_map(|r| r.checkpoint.as_deref()) {
        q.push("; INSERT OR REPLACE INTO run_steps (run_id, step_index, outcome) SELECT ");
        q.push_bind(run_id.as_str());
        q.push(", ");
        q.push_bind(*index);
        q.push(", ");
        q.push_bind(outcome.as_str());
        q.push(" WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = ");
        q.push_bind(run_id.as_str());
        q.push(")");
    }
    if transaction {
        q.push("; COMMIT");
    }
    let outcome = q.build().execute(&mut *connection).await;
    if let Err(e) = outcome {
        if transaction {
            // The statement that failed left the transaction open (unless
            // SQLite rolled it back itself, when this says so and is ignored).
            let _ = sqlx::raw_sql("ROLLBACK").execute(&mut *connection).await;
        }
        return Err(err(e));
    }
    Ok(())
}

#[async_trait]
impl HistoryStore for SqliteStore {
    async fn record(&self, entry: &HistoryEntry) -> Result<(), StoreError> {
        self.writer.record(entry).await
    }

    async fn by_correlation(&self, correlation_id: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        self.writer.flush().await?;
        let rows = sqlx::query("SELECT entry FROM calls WHERE correlation_id = ? ORDER BY rowid")
            .bind(correlation_id)
            .fetch_all(&self.pool)
            .await
            .map_err(err)?;
        rows.iter()
            .map(|row| decode(row.get::<&str, _>("entry")))
            .collect()
    }

    async fn by_call_id(&self, call_id: &str) -> Result<Option<HistoryEntry>, StoreError> {
        self.writer.flush().await?;
        let row = sqlx::query("SELECT entry FROM calls WHERE call_id = ?")
            .bind(call_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(err)?;
        row.map(|row| decode(row.get::<&str, _>("entry")))
            .transpose()
    }

    async fn stats(&self, correlation_id: &str) -> Result<HistoryStats, StoreError> {
        self.writer.flush().await?;
        let row = sqlx::query(
            "SELECT count(*) AS total, coalesce(sum(success), 0) AS ok, coalesce(sum(retried), 0) AS retried, \
             coalesce(sum(duration_ms), 0) AS duration FROM calls WHERE correlation_id = ?",
        )
        .bind(correlation_id)
        .fetch_one(&self.pool)
        .await
        .map_err(err)?;
        let (total, ok, retried, duration): (i64, i64, i64, i64) = (
            row.get("total"),
            row.get("ok"),
            row.get("retried"),
            row.get("duration"),
        );
        Ok(history_stats(total, ok, retried, duration))
    }
}

crate::runs::run_store!(SqliteStore, {
    async fn begin(
        &self,
        run_id: &str,
        plan: &Plan,
        owner: &axon_core::Owner,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO runs (run_id, plan, result, updated_at_ms, handoff, tenant) VALUES (?1, ?2, NULL, ?3, ?4, ?5) \
             ON CONFLICT (run_id) DO UPDATE SET plan = ?2, result = NULL, updated_at_ms = ?3, \
             handoff = max(handoff, ?4)",
        )
        .bind(run_id)
        .bind(encode(plan)?)
        .bind(now_ms())
        .bind(self.handoff)
        .bind(owner.tenant())
        .execute(&self.pool)
        .await
        .map(|_| ())
        .map_err(err)
    }

    async fn claim(&self, run_id: &str) -> Result<Claim, StoreError> {
        let token = ulid::Ulid::new().to_string();
        let holder =
            sqlx::query("SELECT owner, host, pid, heartbeat_ms FROM run_claims WHERE run_id = ?")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(err)?;
        if let Some(row) = &holder {
            // A holder on this host whose process is gone (killed, crashed) is
            // taken over at once; elsewhere, once it stops beating.
            let (owner, host, pid): (String, String, i64) =
                (row.get("owner"), row.get("host"), row.get("pid"));
            let gone = host == self.owner.host
                && pid != i64::from(self.owner.pid)
                && !Path::new(&format!("/proc/{pid}")).exists();
            if gone {
                sqlx::query("DELETE FROM run_claims WHERE run_id = ? AND owner = ?")
                    .bind(run_id)
                    .bind(&owner)
                    .execute(&self.pool)
                    .await
                    .map_err(err)?;
            }
        }
        let now = now_ms();
        let taken = sqlx::query(
            "INSERT INTO run_claims (run_id, owner, host, pid, heartbeat_ms) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (run_id) DO UPDATE SET owner = ?2, host = ?3, pid = ?4, heartbeat_ms = ?5 \
             WHERE run_claims.heartbeat_ms < ?6",
        )
        .bind(run_id)
        .bind(&token)
        .bind(&self.owner.host)
        .bind(i64::from(self.owner.pid))
        .bind(now)
        .bind(now - CLAIM_STALE_MS)
        .execute(&self.pool)
        .await
        .map_err(err)?
        .rows_affected()
            == 1;
        if !taken {
            let (host, pid) = holder
                .map(|row| (row.get::<String, _>("host"), row.get::<i64, _>("pid")))
                .unwrap_or_default();
            return Err(taken_by(run_id, &host, pid));
        }
        Ok(crate::runs::claim_held!(self.pool.clone(), run_id, token))
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    /// A replica polls for pending runs every few seconds over every run the
    /// file keeps: the statement must read the partial index of pending runs,
    /// not scan the runs (`r.handoff` alone, which PostgreSQL's index takes,
    /// is not `handoff = 1` to SQLite's planner).
    #[tokio::test]
    async fn pending_runs_are_read_from_their_partial_index() {
        let path = std::env::temp_dir()
            .join(format!("axon-store-unit-{}", ulid::Ulid::new()))
            .join("axon.db");
        let store = SqliteStore::open(&path, Retention::default())
            .await
            .unwrap();
        let plan: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(format!(
            "EXPLAIN QUERY PLAN {PENDING_RUNS}"
        )))
        .bind(crate::PENDING_SCAN)
        .fetch_all(&store.pool)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<String, _>("detail"))
        .collect();
        assert!(
            plan.iter()
                .any(|step| step.contains("runs_unfinished_handoff")),
            "{plan:?}"
        );
        store.close().await;
    }
}
