//! The history writer's SQLite connection: synchronous (rusqlite, on the same
//! `libsqlite3-sys` as sqlx, so one SQLite library is linked), owned by the
//! writer's own thread ([`Writer::start_on_thread`](crate::Writer)).
//!
//! Through sqlx, every statement is a message to the connection's worker thread
//! and an answer back, and the writer task between caller and worker adds a
//! hand-off of its own: a call recorded in sync mode woke four parties before
//! its caller went on. Here the writer thread runs the statements itself, so a
//! commit is one hand-off from the caller and one back.

use std::path::Path;

use async_trait::async_trait;
use axon_core::StoreError;
use rusqlite::{OpenFlags, TransactionBehavior, params};

use super::{OPEN_TIMEOUT, prune_statements};
use crate::{Batches, Retention, Row, err};

/// The writer's connection (taken when it closes).
pub(super) struct Connection(Option<rusqlite::Connection>);

impl Connection {
    /// Open the file the store has opened and migrated, with the store's
    /// settings and the FIFO trim of groups beyond `keep` rows ([`fifo_trigger`]).
    pub(super) fn open(path: &Path, keep: u64) -> Result<Connection, StoreError> {
        let cannot = |e: rusqlite::Error| {
            StoreError::unavailable_with(format!("cannot open {}: {e}", path.display()), e)
        };
        let db = rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(cannot)?;
        db.busy_timeout(OPEN_TIMEOUT).map_err(cannot)?;
        db.execute_batch(&format!(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -16000; {}",
            fifo_trigger(keep)
        ))
        .map_err(cannot)?;
        Ok(Connection(Some(db)))
    }

    fn db(&mut self) -> Result<&mut rusqlite::Connection, StoreError> {
        self.0
            .as_mut()
            .ok_or_else(|| StoreError::unavailable("the store is closed"))
    }
}

#[async_trait]
impl Batches for Connection {
    /// One transaction: each row (trimming its named group, [`fifo_trigger`])
    /// and the checkpoint it carries: a step whose call is in history is never
    /// run again on resume. A run the store does not know (its runner keeps
    /// runs elsewhere) gets none. The transaction takes the write lock at
    /// `BEGIN`, so another process's lock is waited for (busy timeout) rather
    /// than met halfway through.
    async fn insert(&mut self, rows: &[&Row]) -> Result<(), StoreError> {
        let db = self.db()?;
        let tx = db
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO calls (call_id, correlation_id, tool, success, retried, \
                     duration_ms, started_at_ms, entry) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(err)?;
            for r in rows {
                insert
                    .execute(params![
                        r.call_id.as_str(),
                        r.correlation_id.as_str(),
                        r.tool.as_str(),
                        r.success,
                        r.retried,
                        r.duration_ms,
                        r.started_at_ms,
                        r.entry,
                    ])
                    .map_err(err)?;
            }
            for (run_id, index, outcome) in rows.iter().filter_map(|r| r.checkpoint.as_ref()) {
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO run_steps (run_id, step_index, outcome) SELECT ?1, ?2, ?3 \
                     WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = ?1)",
                )
                .and_then(|mut checkpoint| checkpoint.execute(params![run_id, index, outcome]))
                .map_err(err)?;
            }
        }
        // Dropped uncommitted (an error above), the transaction rolls back.
        tx.commit().map_err(err)
    }

    async fn prune(&mut self, retention: &Retention) -> Result<(), StoreError> {
        let db = self.db()?;
        for (statement, parameter) in prune_statements(retention) {
            db.prepare_cached(statement)
                .and_then(|mut s| s.execute([parameter]))
                .map_err(err)?;
        }
        Ok(())
    }

    async fn close(&mut self) {
        if let Some(db) = self.0.take() {
            let _ = db.close();
        }
    }
}

/// The FIFO trim of a named group, done by the `INSERT` itself: a trigger
/// on the writer's own connection (`TEMP`: it lives and dies with that
/// connection, so each process trims by its own `max_per_correlation`, and
/// the file's schema is untouched). After a row whose correlation id is not
/// its own call id (a call given none is its own group, which holds that one
/// call until a later call names it, and that call's row trims it), the rows
/// at or below the group's `keep`-th newest go, found by stepping `keep`
/// entries down the (correlation_id, rowid) index, so a row costs the same
/// however full its group is. The only value in the text is an integer.
fn fifo_trigger(keep: u64) -> String {
    format!(
        "CREATE TEMP TRIGGER calls_fifo AFTER INSERT ON main.calls \
         WHEN NEW.correlation_id <> NEW.call_id \
         BEGIN \
             DELETE FROM calls WHERE correlation_id = NEW.correlation_id AND rowid <= \
                 (SELECT rowid FROM calls WHERE correlation_id = NEW.correlation_id \
                  ORDER BY rowid DESC LIMIT 1 OFFSET {}); \
         END",
        keep.max(1)
    )
}
