//! The retention rules applied ([`Retention`]): history older than
//! `max_age` and beyond `max_calls`, expired idempotency keys, abandoned
//! claims, runs by age and count. Each dialect finds the oldest rows its own
//! way (SQLite by rowid, PostgreSQL by `seq`); both run when a store opens,
//! when the writer prunes and when an operator asks (`Upkeep::prune`).

use std::time::{Duration, SystemTime};

use axon_core::{StoreError, Timestamp};
use sqlx::SqliteConnection;
use sqlx::postgres::PgPool;

use crate::{IDEMPOTENCY_TTL_MS, Retention, err, now_ms};

/// Drop history older than `max_age` and beyond `max_calls`.
pub(crate) async fn sqlite(
    db: &mut SqliteConnection,
    retention: &Retention,
) -> Result<(), StoreError> {
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

/// Drop history older than `max_age` and beyond `max_calls`, expired
/// idempotency keys, abandoned claims, and runs beyond the retention rules.
pub(crate) async fn postgres(pool: &PgPool, retention: &Retention) -> Result<(), StoreError> {
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
