//! The store on PostgreSQL (`[store] url = "postgres://…"`): the tables and
//! queries of the SQLite store, shared by every server replica, so that history
//! is one, a run's checkpoints are seen by the replica that takes it over, and
//! an idempotency key answers once across the cluster. History writes are
//! batched by the same writer task as SQLite's (one transaction per batch).

use std::str::FromStr;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use axon_core::{HistoryEntry, HistoryStats, HistoryStore, StoreError, Timestamp};
use axon_plan::{Claim, Plan};
use sqlx::Row as _;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use axon_store_roles::{
    Health, RECENT_LATENCY_ROWS, RecentLatencies, RunFilter, RunListing, RunQuery, RunSummary,
    Upkeep,
};

use crate::{
    Batches, CLAIM_STALE_MS, IDEMPOTENCY_TTL_MS, Owner, Retention, Row, Writer, decode, encode,
    err, holder_of, now_ms, run_summary_of, taken_by,
};

/// How long opening the store waits for a connection: a database that cannot
/// be reached stops `axon serve` at start-up (exit 3) instead of hanging.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// History and runs in a PostgreSQL database, shared by the replicas that
/// open it. See [`SqliteStore`](crate::SqliteStore) for the writer's contract
/// (group commit, durability, reads see their own writes): it is the same.
pub struct PgStore {
    pub(crate) pool: PgPool,
    target: String,
    retention: Retention,
    pub(crate) writer: Writer,
    pub(crate) owner: Owner,
    handoff: bool,
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
        prune(&pool, &retention).await?;
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

/// Drop history older than `max_age` and beyond `max_calls`, expired
/// idempotency keys, abandoned claims, and runs beyond the retention rules.
async fn prune(pool: &PgPool, retention: &Retention) -> Result<(), StoreError> {
    let cutoff = retention.max_age.map(|age| {
        SystemTime::now()
            .checked_sub(age)
            .map(|t| Timestamp(t).unix_ms() as i64)
            .unwrap_or(0)
    });
    if let Some(cutoff) = cutoff {
        sqlx::query("DELETE FROM calls WHERE started_at_ms < $1")
            .bind(cutoff)
            .execute(pool)
            .await
            .map_err(err)?;
    }
    if retention.max_calls > 0 {
        sqlx::query("DELETE FROM calls WHERE seq <= (SELECT max(seq) FROM calls) - $1")
            .bind(retention.max_calls as i64)
            .execute(pool)
            .await
            .map_err(err)?;
    }
    sqlx::query("DELETE FROM idempotency WHERE created_at_ms < $1")
        .bind(now_ms() - IDEMPOTENCY_TTL_MS)
        .execute(pool)
        .await
        .map_err(err)?;
    sqlx::query("DELETE FROM run_claims WHERE heartbeat_ms < $1")
        .bind(now_ms() - 3_600_000)
        .execute(pool)
        .await
        .map_err(err)?;
    if let Some(cutoff) = cutoff {
        sqlx::query(
            "DELETE FROM runs WHERE updated_at_ms < $1 AND run_id NOT IN (SELECT run_id FROM run_claims)",
        )
        .bind(cutoff)
        .execute(pool)
        .await
        .map_err(err)?;
    }
    if retention.max_runs > 0 {
        sqlx::query(
            "DELETE FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_claims) AND run_id IN \
             (SELECT run_id FROM runs ORDER BY updated_at_ms DESC OFFSET $1)",
        )
        .bind(retention.max_runs as i64)
        .execute(pool)
        .await
        .map_err(err)?;
    }
    Ok(())
}

/// The writer's batches go through the pool: one transaction each, trimming
/// each named group they touch to `keep` rows.
struct PgBatches {
    pool: PgPool,
    keep: u64,
}

#[async_trait]
impl Batches for PgBatches {
    async fn insert(&mut self, rows: &[&Row]) -> Result<(), StoreError> {
        // One row per call id: a batch may carry a call recorded twice, and an
        // upsert may touch a row once per statement.
        let mut unique: Vec<&Row> = Vec::with_capacity(rows.len());
        for row in rows.iter().rev() {
            if !unique.iter().any(|u| u.call_id == row.call_id) {
                unique.push(row);
            }
        }
        unique.reverse();
        let ids = crate::ids_to_trim(unique.iter());
        let checkpoints = unique.iter().any(|r| r.checkpoint.is_some());
        let mut insert = sqlx::QueryBuilder::new(
            "INSERT INTO calls (call_id, correlation_id, owner, tool, success, retried, duration_ms, started_at_ms, entry) ",
        );
        insert.push_values(&unique, |mut b, r| {
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
        insert.push(
            " ON CONFLICT (call_id) DO UPDATE SET correlation_id = EXCLUDED.correlation_id, \
             owner = EXCLUDED.owner, tool = EXCLUDED.tool, success = EXCLUDED.success, retried = EXCLUDED.retried, \
             duration_ms = EXCLUDED.duration_ms, started_at_ms = EXCLUDED.started_at_ms, \
             entry = EXCLUDED.entry",
        );
        if ids.is_empty() && !checkpoints {
            // One statement is atomic on its own: no transaction, one round
            // trip instead of four.
            insert.build().execute(&self.pool).await.map_err(err)?;
            return Ok(());
        }
        let mut tx = self.pool.begin().await.map_err(err)?;
        insert.build().execute(&mut *tx).await.map_err(err)?;

        if !ids.is_empty() {
            sqlx::query(
                // FIFO per group (one owner's calls under a correlation id):
                // at or below the `keep`-th newest row goes, found by
                // stepping `keep` entries down calls_by_correlation (not a
                // window over the whole group, sorted).
                "WITH cut AS (SELECT g.id, g.owner, (SELECT d.seq FROM calls d \
                 WHERE d.correlation_id = g.id AND d.owner = g.owner \
                 ORDER BY d.seq DESC OFFSET $3 LIMIT 1) AS seq \
                 FROM unnest($1::text[], $2::text[]) AS g(id, owner)) \
                 DELETE FROM calls c USING cut WHERE c.correlation_id = cut.id \
                 AND c.owner = cut.owner AND c.seq <= cut.seq",
            )
            .bind(ids.iter().map(|(id, _)| *id).collect::<Vec<_>>())
            .bind(ids.iter().map(|(_, owner)| *owner).collect::<Vec<_>>())
            .bind(self.keep.max(1) as i64)
            .execute(&mut *tx)
            .await
            .map_err(err)?;
        }

        for (run_id, index, outcome) in unique.iter().filter_map(|r| r.checkpoint.as_deref()) {
            sqlx::query(
                "INSERT INTO run_steps (run_id, step_index, outcome) \
                 SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = $1) \
                 ON CONFLICT (run_id, step_index) DO UPDATE SET outcome = EXCLUDED.outcome",
            )
            .bind(run_id)
            .bind(index)
            .bind(outcome)
            .execute(&mut *tx)
            .await
            .map_err(err)?;
        }
        tx.commit().await.map_err(err)
    }

    async fn prune(&mut self, retention: &Retention) -> Result<(), StoreError> {
        prune(&self.pool, retention).await
    }

    async fn close(&mut self) {}
}

#[async_trait]
impl HistoryStore for PgStore {
    async fn record(&self, entry: &HistoryEntry) -> Result<(), StoreError> {
        self.writer.record(entry).await
    }

    async fn by_correlation(&self, correlation_id: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        self.writer.flush().await?;
        let rows = sqlx::query("SELECT entry FROM calls WHERE correlation_id = $1 ORDER BY seq")
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
        let row = sqlx::query("SELECT entry FROM calls WHERE call_id = $1")
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
            "SELECT count(*) AS total, coalesce(sum(success::int), 0)::bigint AS ok, \
             coalesce(sum(retried::int), 0)::bigint AS retried, \
             coalesce(sum(duration_ms), 0)::bigint AS duration FROM calls WHERE correlation_id = $1",
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
        Ok(crate::history_stats(total, ok, retried, duration))
    }
}

crate::runs::run_store!(PgStore, {
    async fn begin(
        &self,
        run_id: &str,
        plan: &Plan,
        owner: &axon_core::Owner,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO runs (run_id, plan, result, updated_at_ms, handoff, tenant) VALUES ($1, $2, NULL, $3, $4, $5) \
             ON CONFLICT (run_id) DO UPDATE SET plan = $2, result = NULL, updated_at_ms = $3, \
             handoff = runs.handoff OR $4",
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
            sqlx::query("SELECT run_id, host, pid, heartbeat_ms FROM run_claims WHERE run_id = $1")
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await
                .map_err(err)?
                .map(|row| holder_of(&row));
        // The lease is taken when free or void (its holder is gone or stopped
        // beating), atomically: of replicas racing for it, one wins. The
        // heartbeat read is compared again in the statement, so a holder that
        // beat in between keeps it.
        let void_since = match holder.as_ref().and_then(|h| h.claim.as_ref()) {
            Some((host, pid, beat)) if self.owner.may_take_over(host, *pid, *beat) => *beat + 1,
            _ => now_ms() - CLAIM_STALE_MS,
        };
        let now = now_ms();
        let taken = sqlx::query(
            "INSERT INTO run_claims (run_id, owner, host, pid, heartbeat_ms) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (run_id) DO UPDATE SET owner = $2, host = $3, pid = $4, heartbeat_ms = $5 \
             WHERE run_claims.heartbeat_ms < $6",
        )
        .bind(run_id)
        .bind(&token)
        .bind(&self.owner.host)
        .bind(i64::from(self.owner.pid))
        .bind(now)
        .bind(void_since)
        .execute(&self.pool)
        .await
        .map_err(err)?
        .rows_affected()
            == 1;
        if !taken {
            let (host, pid) = holder
                .and_then(|h| h.claim)
                .map(|(host, pid, _)| (host, pid))
                .unwrap_or_default();
            return Err(taken_by(run_id, &host, pid));
        }
        Ok(crate::runs::claim_held!(self.pool.clone(), run_id, token))
    }
});

/// The runs waiting for a replica, oldest first: its condition is the
/// partial index `runs_unfinished_handoff`'s, word for word, so that the
/// index is read instead of every run.
pub(crate) const PENDING_RUNS: &str = "SELECT r.run_id, c.host, c.pid, c.heartbeat_ms FROM runs r \
     LEFT JOIN run_claims c ON c.run_id = r.run_id \
     WHERE r.result IS NULL AND r.handoff ORDER BY r.updated_at_ms LIMIT $1";

#[async_trait]
impl Upkeep for PgStore {
    async fn prune(&self) -> Result<(), StoreError> {
        self.writer.flush().await?;
        prune(&self.pool, &self.retention).await
    }

    async fn flush(&self) -> Result<(), StoreError> {
        self.writer.flush().await
    }

    /// Commit the history queued so far, then close the pool. Records after
    /// this fail.
    async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
    }
}

#[async_trait]
impl Health for PgStore {
    async fn check_writable(&self) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO health (id, at_ms) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at_ms = $1",
        )
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map(|_| ())
        .map_err(err)
    }

    fn describe(&self) -> String {
        self.target.clone()
    }
}

#[async_trait]
impl RunListing for PgStore {
    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunSummary>, StoreError> {
        let count = |statuses: &str| {
            format!(
                "(SELECT count(*) FROM run_steps s WHERE s.run_id = r.run_id \
                 AND s.outcome::jsonb->>'status' IN ({statuses})) \
                 + (SELECT count(*) FROM jsonb_array_elements(coalesce(r.result::jsonb->'steps', '[]'::jsonb)) j \
                 WHERE j->>'status' IN ({statuses}))"
            )
        };
        let sql = format!(
            "SELECT r.run_id, r.plan::jsonb->>'name' AS name, \
                    jsonb_array_length(coalesce(r.plan::jsonb->'steps', '[]'::jsonb))::bigint AS total, \
                    r.result::jsonb->>'status' AS status, \
                    (r.result::jsonb->>'duration_ms')::bigint AS duration_ms, \
                    r.updated_at_ms, {} AS succeeded, {} AS failed, {} AS skipped \
             FROM runs r \
             WHERE ($1::bigint IS NULL OR r.updated_at_ms < $1) \
               AND ($2 = 0 OR ($2 = 1 AND r.result::jsonb->>'status' = $3) \
                    OR ($2 = 2 AND r.result IS NULL)) \
               AND ($5::text IS NULL OR r.tenant = $5) \
             ORDER BY r.updated_at_ms DESC, r.run_id DESC LIMIT $4",
            count("'succeeded'"),
            count("'failed'"),
            count("'skipped', 'cancelled'"),
        );
        let (mode, status) = match &query.status {
            None => (0i32, None),
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
impl RecentLatencies for PgStore {
    async fn recent_latencies(
        &self,
        per_tool: u32,
        since_ms: i64,
    ) -> Result<Vec<(String, Vec<u64>)>, StoreError> {
        self.writer.flush().await?;
        let rows = sqlx::query(
            "SELECT tool, duration_ms FROM ( \
                 SELECT tool, duration_ms, started_at_ms, ROW_NUMBER() OVER \
                     (PARTITION BY tool ORDER BY started_at_ms DESC) AS n \
                 FROM calls WHERE seq > (SELECT coalesce(max(seq), 0) FROM calls) - $1 \
                     AND started_at_ms >= $2 AND success AND NOT retried) t \
             WHERE n <= $3 ORDER BY tool, started_at_ms",
        )
        .bind(RECENT_LATENCY_ROWS)
        .bind(since_ms)
        .bind(i64::from(per_tool))
        .fetch_all(&self.pool)
        .await
        .map_err(err)?;
        Ok(crate::latencies_of(rows.iter().map(|row| {
            (
                row.get::<String, _>("tool"),
                row.get::<i64, _>("duration_ms"),
            )
        })))
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
