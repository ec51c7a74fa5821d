//! Call history: every call leaves an entry (its result and its redacted
//! arguments), grouped by correlation id so a workflow can be replayed and
//! explained afterwards ("what happened and why"). The [`HistoryStore`]
//! trait is the seam; [`InMemoryHistory`] is the library default and the SQLite and
//! PostgreSQL stores of `axon-store` implement the same trait.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use smol_str::SmolStr;

use crate::result::CallResult;

/// One recorded call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryEntry {
    /// What came back.
    #[serde(flatten)]
    pub result: CallResult,
    /// The arguments, with secrets replaced by `"***"`.
    pub args: Value,
    /// The plan step this call ran, when it ran one: a store that keeps runs
    /// too checkpoints the step in the same transaction as this entry, so a run
    /// killed right after the call does not run the step again on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<StepMark>,
    /// Who made the call (`ToolCall::owner`): another tenant does not read
    /// it, nor does its trimming reach it (docs/security.md). Stored as
    /// `tenant`, the tenant's name; left out for the process's owner.
    #[serde(
        rename = "tenant",
        default,
        skip_serializing_if = "crate::Owner::is_process"
    )]
    pub owner: crate::Owner,
}

/// Which step of which run a call belongs to ([`HistoryEntry::step`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepMark {
    /// The run.
    pub run_id: String,
    /// The step's position in the plan.
    pub index: usize,
    /// The step's id, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Figures over a set of calls (what `axon stats` and `GET /v1/stats` show).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryStats {
    /// Calls.
    pub total: u64,
    /// Calls that succeeded.
    pub succeeded: u64,
    /// Calls that failed.
    pub failed: u64,
    /// Calls that needed more than one attempt.
    pub retried: u64,
    /// Mean duration, ms.
    pub average_duration_ms: f64,
    /// Summed duration, ms.
    pub total_duration_ms: u64,
    /// `succeeded / total`, 0 when there are no calls.
    pub success_rate: f64,
}

impl HistoryStats {
    /// Compute the figures of some entries.
    pub fn of<'a>(entries: impl IntoIterator<Item = &'a HistoryEntry>) -> Self {
        let mut s = HistoryStats::default();
        for e in entries {
            s.total += 1;
            if e.result.success {
                s.succeeded += 1;
            } else {
                s.failed += 1;
            }
            if e.result.was_retried() {
                s.retried += 1;
            }
            s.total_duration_ms += e.result.duration_ms;
        }
        if s.total > 0 {
            s.average_duration_ms = s.total_duration_ms as f64 / s.total as f64;
            s.success_rate = s.succeeded as f64 / s.total as f64;
        }
        s
    }
}

/// A store failed (disk full, database gone, a record that does not read).
/// Recording never fails a call; it is logged instead. The kinds tell a
/// caller what to do: try again later, pick another key, or look at the data.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The store cannot be opened or reached, or refused the statement (the
    /// file, the database, a lock): later may work.
    #[error("history store: {message}")]
    Unavailable {
        /// What failed, naming the store.
        message: String,
        /// The driver's or the system's error, when there is one.
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
    /// What is asked for is taken: a run id in use, a run another process
    /// runs.
    #[error("history store: {message}")]
    Conflict {
        /// Which key, and by whom.
        message: String,
    },
    /// A stored record does not read back, or a record cannot be written as
    /// one.
    #[error("history store: {message}")]
    Corrupt {
        /// Which record.
        message: String,
        /// The decoder's error, when there is one.
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
}

impl StoreError {
    /// [`StoreError::Unavailable`] with a message only.
    pub fn unavailable(message: impl Into<String>) -> Self {
        StoreError::Unavailable {
            message: message.into(),
            source: None,
        }
    }

    /// [`StoreError::Unavailable`] from the driver's error, whose text is the
    /// message.
    pub fn from_driver(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        StoreError::Unavailable {
            message: source.to_string(),
            source: Some(Arc::new(source)),
        }
    }

    /// [`StoreError::Unavailable`] with what failed and why.
    pub fn unavailable_with(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError::Unavailable {
            message: message.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// [`StoreError::Conflict`].
    pub fn conflict(message: impl Into<String>) -> Self {
        StoreError::Conflict {
            message: message.into(),
        }
    }

    /// [`StoreError::Corrupt`] from the decoder's error.
    pub fn corrupt(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError::Corrupt {
            message: message.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// What failed, without the "history store:" the display puts first.
    pub fn message(&self) -> &str {
        match self {
            StoreError::Unavailable { message, .. }
            | StoreError::Conflict { message }
            | StoreError::Corrupt { message, .. } => message,
        }
    }
}

/// Where call history goes.
#[async_trait]
pub trait HistoryStore: Send + Sync + 'static {
    /// Record a finished call. The entry is lent: a store that writes rows
    /// encodes it, one that keeps entries copies it, and the executor hands
    /// the result back to its caller without having copied it.
    async fn record(&self, entry: &HistoryEntry) -> Result<(), StoreError>;

    /// Whether [`record_at_once`](HistoryStore::record_at_once) works: the
    /// store records without waiting (it keeps entries in memory), so the
    /// executor makes no future for the write. Default false.
    fn records_at_once(&self) -> bool {
        false
    }

    /// Record a finished call without waiting; only called when
    /// [`records_at_once`](HistoryStore::records_at_once) is true. The entry is
    /// the store's to keep. The default refuses (a store that has to wait
    /// implements `record` only).
    fn record_at_once(&self, entry: HistoryEntry) -> Result<(), StoreError> {
        let _ = entry;
        Err(StoreError::unavailable(
            "this history store records through `record` only",
        ))
    }

    /// Calls of one correlation id, oldest first.
    async fn by_correlation(&self, correlation_id: &str) -> Result<Vec<HistoryEntry>, StoreError>;

    /// One call by its id.
    async fn by_call_id(&self, call_id: &str) -> Result<Option<HistoryEntry>, StoreError>;

    /// Figures of one correlation id.
    async fn stats(&self, correlation_id: &str) -> Result<HistoryStats, StoreError> {
        Ok(HistoryStats::of(
            &self.by_correlation(correlation_id).await?,
        ))
    }
}

/// Bounds of the in-memory store.
#[derive(Clone, Copy, Debug)]
pub struct HistoryLimits {
    /// Entries kept per correlation id and owner (a tenant's calls never
    /// push another's out); the oldest go first (FIFO).
    pub max_per_correlation: usize,
    /// Correlation ids kept; the least recently started go first.
    pub max_correlations: usize,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        HistoryLimits {
            max_per_correlation: 100,
            max_correlations: 10_000,
        }
    }
}

/// Ids are shared (`SmolStr`, the result's own) between the three indexes, so
/// that recording a call copies no id. foldhash (seeded per process)
/// rather than SipHash: a fifth of the cost of hashing an id.
#[derive(Default)]
struct Book {
    by_correlation: HashMap<SmolStr, Group, Hasher>,
    order: VecDeque<SmolStr>,
    call_index: HashMap<SmolStr, SmolStr, Hasher>,
}

type Hasher = foldhash::fast::RandomState;

/// The calls of one correlation id, oldest first.
#[derive(Default)]
struct Group {
    entries: VecDeque<HistoryEntry>,
    /// Whether two owners' calls were ever in it. A group of one owner (the
    /// usual) is trimmed from its front; a mixed one owner by owner, so that
    /// one tenant's calls never push another's out.
    mixed: bool,
}

impl Group {
    /// Add `entry`, and drop what its owner has past `keep`, handing each
    /// dropped entry to `dropped`.
    fn push(&mut self, entry: HistoryEntry, keep: usize, mut dropped: impl FnMut(HistoryEntry)) {
        if let Some(last) = self.entries.back() {
            self.mixed |= last.owner != entry.owner;
        }
        self.entries.push_back(entry);
        if self.entries.len() <= keep {
            return;
        }
        if !self.mixed {
            if let Some(old) = self.entries.pop_front() {
                dropped(old);
            }
            return;
        }
        let Some(owner) = self.entries.back().map(|e| e.owner.clone()) else {
            return;
        };
        let same = |e: &HistoryEntry| e.owner == owner;
        while self.entries.iter().filter(|e| same(e)).count() > keep {
            let Some(oldest) = self.entries.iter().position(same) else {
                break;
            };
            if let Some(old) = self.entries.remove(oldest) {
                dropped(old);
            }
        }
    }
}

/// History in memory, bounded: the library default and the store of tests.
#[derive(Default)]
pub struct InMemoryHistory {
    limits: HistoryLimits,
    book: Mutex<Book>,
}

impl InMemoryHistory {
    /// A store with the default bounds (100 per correlation, 10 000 correlations).
    pub fn new() -> Self {
        Self::default()
    }

    /// A store with other bounds.
    pub fn with_limits(limits: HistoryLimits) -> Self {
        InMemoryHistory {
            limits,
            book: Mutex::new(Book::default()),
        }
    }

    /// Entries held, over all correlation ids.
    pub fn len(&self) -> usize {
        self.book.lock().map(|b| b.call_index.len()).unwrap_or(0)
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait]
impl HistoryStore for InMemoryHistory {
    async fn record(&self, entry: &HistoryEntry) -> Result<(), StoreError> {
        self.record_at_once(entry.clone())
    }

    fn records_at_once(&self) -> bool {
        true
    }

    fn record_at_once(&self, entry: HistoryEntry) -> Result<(), StoreError> {
        let mut guard = self
            .book
            .lock()
            .map_err(|_| StoreError::unavailable("history lock poisoned"))?;
        let book = &mut *guard;
        let corr: SmolStr = match book
            .by_correlation
            .get_key_value(&*entry.result.correlation_id)
        {
            Some((known, _)) => known.clone(),
            None => {
                let corr = entry.result.correlation_id.clone();
                book.order.push_back(corr.clone());
                while book.order.len() > self.limits.max_correlations.max(1) {
                    if let Some(old) = book.order.pop_front() {
                        let group = book.by_correlation.remove(&old).unwrap_or_default();
                        for e in group.entries {
                            book.call_index.remove(&e.result.call_id);
                        }
                    }
                }
                corr
            }
        };
        book.call_index
            .insert(entry.result.call_id.clone(), corr.clone());
        let keep = self.limits.max_per_correlation.max(1);
        let Book {
            by_correlation,
            call_index,
            ..
        } = book;
        by_correlation
            .entry(corr)
            .or_default()
            .push(entry, keep, |old| {
                call_index.remove(&old.result.call_id);
            });
        Ok(())
    }

    async fn by_correlation(&self, correlation_id: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        let book = self
            .book
            .lock()
            .map_err(|_| StoreError::unavailable("history lock poisoned"))?;
        Ok(book
            .by_correlation
            .get(correlation_id)
            .map(|g| g.entries.iter().cloned().collect())
            .unwrap_or_default())
    }

    async fn by_call_id(&self, call_id: &str) -> Result<Option<HistoryEntry>, StoreError> {
        let book = self
            .book
            .lock()
            .map_err(|_| StoreError::unavailable("history lock poisoned"))?;
        let Some(corr) = book.call_index.get(call_id) else {
            return Ok(None);
        };
        Ok(book.by_correlation.get(corr).and_then(|g| {
            g.entries
                .iter()
                .find(|e| &*e.result.call_id == call_id)
                .cloned()
        }))
    }
}
