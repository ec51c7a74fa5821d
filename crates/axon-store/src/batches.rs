//! The history writer's two dialects ([`Batches`]): how a batch of call
//! rows, with the plan checkpoints they carry, is written and its named
//! groups trimmed — on SQLite in one multi-statement query on the writer's
//! own connection (the trim a trigger), on PostgreSQL in one transaction
//! through the pool. The writer itself (`writer.rs`) is the same for both.

use async_trait::async_trait;
use axon_core::StoreError;
use sqlx::postgres::PgPool;
use sqlx::{Connection, SqliteConnection};

use crate::{Batches, Retention, Row, err};

/// The SQLite writer's own connection (taken when it closes).
pub(crate) struct SqliteBatches(pub(crate) Option<SqliteConnection>);

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
        crate::pruning::sqlite(self.connection()?, retention).await
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
pub(crate) fn fifo_trigger(keep: u64) -> String {
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

/// The writer's batches go through the pool: one transaction each, trimming
/// each named group they touch to `keep` rows.
pub(crate) struct PgBatches {
    pub(crate) pool: PgPool,
    pub(crate) keep: u64,
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
        crate::pruning::postgres(&self.pool, retention).await
    }

    async fn close(&mut self) {}
}
