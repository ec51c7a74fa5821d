//! The runs as `axon runs` and `GET /v1/runs` list them ([`RunListing`]),
//! in either store: each dialect reads the plan and result JSON its own way
//! (`json_extract` and `json_each` on SQLite, `jsonb` on PostgreSQL).

use async_trait::async_trait;
use axon_core::StoreError;
use axon_store_roles::{RunFilter, RunListing, RunQuery, RunSummary};

use crate::{PgStore, SqliteStore, err, run_summary_of};

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
