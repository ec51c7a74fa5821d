//! The history writer both stores share: one task takes whatever rows have
//! queued up and commits them in one transaction (group commit), answers the
//! callers waiting for their rows, and prunes by the retention rules now and
//! then. Each store supplies where the batches go ([`Batches`]).

use async_trait::async_trait;
use axon_core::{HistoryEntry, SmolStr, StoreError};
use axon_plan::StepOutcome;
use tokio::sync::{mpsc, oneshot};

use crate::{Durability, Retention, encode};

/// Prune the whole history after this many records (and when the file is opened).
pub(crate) const PRUNE_EVERY: u64 = 1_000;

/// Calls committed together at most.
pub(crate) const MAX_BATCH: usize = 256;

/// A history row, encoded by the caller so the writer only writes.
pub(crate) struct Row {
    // The result's own names, shared (no copy per row).
    pub(crate) call_id: SmolStr,
    pub(crate) correlation_id: SmolStr,
    /// Who made the call ([`axon_core::Owner::key`]): a named group is
    /// trimmed per owner.
    pub(crate) owner: String,
    pub(crate) tool: SmolStr,
    pub(crate) success: bool,
    pub(crate) retried: bool,
    pub(crate) duration_ms: i64,
    pub(crate) started_at_ms: i64,
    pub(crate) entry: String,
    /// The plan step the call ran: (run id, step index, checkpoint JSON).
    /// Boxed: most calls are no plan step's, and every queued row is as
    /// large as its largest field.
    pub(crate) checkpoint: Option<Box<(String, i64, String)>>,
}

/// Answered once a row is committed (or could not be).
pub(crate) type Ack = oneshot::Sender<Result<(), StoreError>>;

/// Work for the writer task.
pub(crate) enum Job {
    Record(Row, Option<Ack>),
    /// Answered once everything queued before is committed.
    Flush(oneshot::Sender<()>),
    /// Everything queued before is committed; then the writer stops.
    Close(oneshot::Sender<()>),
}

/// Where the history writer commits its batches: one SQLite connection of its
/// own, or the PostgreSQL pool.
#[async_trait]
pub(crate) trait Batches: Send + 'static {
    /// Commit `rows` in one transaction, with the checkpoints they carry, then
    /// keep `max_per_correlation` rows (the sink's, set when it was made) per
    /// correlation id they touch.
    async fn insert(&mut self, rows: &[&Row]) -> Result<(), StoreError>;
    /// Apply the retention rules.
    async fn prune(&mut self, retention: &Retention) -> Result<(), StoreError>;
    /// Let go of the connection.
    async fn close(&mut self);
}

/// The writer task: take one job, then whatever else is queued (up to
/// [`MAX_BATCH`] rows), and commit the rows in one transaction; then answer the
/// flushes that were waiting for them.
pub(crate) async fn write_history(
    mut sink: impl Batches,
    retention: Retention,
    mut jobs: mpsc::Receiver<Job>,
) {
    let mut written: u64 = 0;
    let mut rows: Vec<Row> = Vec::new();
    let mut acks: Vec<Ack> = Vec::new();
    let mut flushed: Vec<oneshot::Sender<()>> = Vec::new();
    while let Some(job) = jobs.recv().await {
        let mut close = None;
        let mut next = Some(job);
        while let Some(job) = next.take() {
            match job {
                Job::Record(row, ack) => {
                    rows.push(row);
                    acks.extend(ack);
                }
                Job::Flush(done) => flushed.push(done),
                Job::Close(done) => {
                    close = Some(done);
                    break;
                }
            }
            if rows.len() < MAX_BATCH {
                next = jobs.try_recv().ok();
            }
        }
        if !rows.is_empty() {
            let batch: Vec<&Row> = rows.iter().collect();
            let outcome = sink.insert(&batch).await;
            if let Err(e) = &outcome {
                tracing::error!(error = %e, calls = rows.len(), "could not record calls in history");
            }
            for ack in acks.drain(..) {
                let _ = ack.send(outcome.clone());
            }
            let before = written;
            written += rows.len() as u64;
            rows.clear();
            if before / PRUNE_EVERY != written / PRUNE_EVERY
                && let Err(e) = sink.prune(&retention).await
            {
                tracing::warn!(error = %e, "could not prune history");
            }
        }
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
        if let Some(done) = close {
            sink.close().await;
            let _ = done.send(());
            return;
        }
    }
}

/// The sending side of a store's history writer, and when `record` returns.
pub(crate) struct Writer {
    pub(crate) jobs: mpsc::Sender<Job>,
    pub(crate) durability: Durability,
}

impl Writer {
    /// Start the writer task over `sink`.
    pub(crate) fn start(sink: impl Batches, retention: Retention) -> Writer {
        let (jobs, queue) = mpsc::channel(4 * MAX_BATCH);
        tokio::spawn(write_history(sink, retention, queue));
        Writer {
            jobs,
            durability: Durability::default(),
        }
    }

    /// Queue `entry`; with [`Durability::Sync`], wait for its commit.
    pub(crate) async fn record(&self, entry: &HistoryEntry) -> Result<(), StoreError> {
        let r = &entry.result;
        let row = Row {
            call_id: r.call_id.clone(),
            correlation_id: r.correlation_id.clone(),
            owner: entry.owner.key().to_string(),
            tool: r.tool.clone(),
            success: r.success,
            retried: r.was_retried(),
            duration_ms: r.duration_ms as i64,
            started_at_ms: r.started_at.unix_ms() as i64,
            entry: encode(entry)?,
            checkpoint: match StepOutcome::checkpoint_of(entry) {
                Some((run_id, outcome)) => {
                    Some(Box::new((run_id, outcome.index as i64, encode(&outcome)?)))
                }
                None => None,
            },
        };
        let closed = || StoreError::unavailable("the store is closed");
        if self.durability == Durability::Async {
            return self
                .jobs
                .send(Job::Record(row, None))
                .await
                .map_err(|_| closed());
        }
        let (ack, committed) = oneshot::channel();
        self.jobs
            .send(Job::Record(row, Some(ack)))
            .await
            .map_err(|_| closed())?;
        match committed.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StoreError::unavailable("the history writer stopped")),
        }
    }

    /// Wait until everything queued so far is committed.
    pub(crate) async fn flush(&self) -> Result<(), StoreError> {
        let (done, flushed) = oneshot::channel();
        self.jobs
            .send(Job::Flush(done))
            .await
            .map_err(|_| StoreError::unavailable("the store is closed"))?;
        flushed
            .await
            .map_err(|_| StoreError::unavailable("the history writer stopped"))
    }

    /// Commit everything queued so far, then stop the writer.
    pub(crate) async fn close(&self) {
        let (done, flushed) = oneshot::channel();
        if self.jobs.send(Job::Close(done)).await.is_ok() {
            let _ = flushed.await;
        }
    }
}

/// The groups a batch's FIFO trim has to look at, as (correlation id,
/// owner): those of rows whose correlation id is not their own call id. A
/// call given no correlation id is its own group, which holds that one call
/// until a later call names it, and that call's batch trims it. A group is
/// one owner's calls under the id: another tenant's never push them out.
/// Sorted, without repeats.
pub(crate) fn ids_to_trim<'a>(rows: impl Iterator<Item = &'a &'a Row>) -> Vec<(&'a str, &'a str)> {
    let mut ids: Vec<(&str, &str)> = rows
        .filter(|r| r.correlation_id != r.call_id)
        .map(|r| (r.correlation_id.as_str(), r.owner.as_str()))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}
