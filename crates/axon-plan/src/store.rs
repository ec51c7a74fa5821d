//! Checkpoints: every finished step of a run is saved as it finishes, so a run that
//! was interrupted (a crash, a kill, a restart) resumes under the same run id
//! without executing its finished steps again. [`RunStore`] is the seam; the
//! in-memory store is the library default and `axon-store` adds SQLite and
//! PostgreSQL.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axon_core::StoreError;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::idempotency::{Idempotency, IdempotencyBegin};
use crate::plan::Plan;
use crate::result::{PlanResult, StepOutcome};

/// What a store knows about one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run.
    pub run_id: String,
    /// The plan it runs.
    pub plan: Plan,
    /// Finished steps by index.
    pub steps: BTreeMap<usize, StepOutcome>,
    /// The final result, once the run has finished.
    pub result: Option<PlanResult>,
    /// Who began it (`RunOptions::owner`; stored as `tenant`, left out for
    /// the process's owner). Another tenant does not see it.
    #[serde(
        rename = "tenant",
        default,
        skip_serializing_if = "axon_core::Owner::is_process"
    )]
    pub owner: axon_core::Owner,
}

/// A run's whole result from what a store keeps: the result saved by
/// [`RunStore::finish`], which leaves out the checkpointed steps, with those
/// filled in from `checkpoints`, in plan order. A result stored whole (as before
/// results left checkpoints out) comes back as it was.
pub fn complete_result(
    mut result: PlanResult,
    checkpoints: &BTreeMap<usize, StepOutcome>,
) -> PlanResult {
    let present: HashSet<usize> = result.steps.iter().map(|s| s.index).collect();
    let whole = result.steps.len();
    result.steps.extend(
        checkpoints
            .iter()
            .filter(|(i, _)| !present.contains(i))
            .map(|(_, step)| step.clone()),
    );
    if result.steps.len() > whole {
        result.steps.sort_by_key(|s| s.index);
    }
    result
}

/// Where runs and their checkpoints are kept.
#[async_trait]
pub trait RunStore: Send + Sync + 'static {
    /// A run, if the store has it.
    async fn load(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError>;
    /// Note that a run started (or resumed) with this plan, by `owner`. A
    /// run keeps the owner it was first begun (or queued) by.
    async fn begin(
        &self,
        run_id: &str,
        plan: &Plan,
        owner: &axon_core::Owner,
    ) -> Result<(), StoreError>;
    /// Save a finished step.
    async fn checkpoint(&self, run_id: &str, step: &StepOutcome) -> Result<(), StoreError>;
    /// Save the final result. Its `steps` are only those without a checkpoint
    /// (skipped, cancelled, never run): [`load`](RunStore::load) gives the whole
    /// result back with the checkpointed steps filled in ([`complete_result`]), so
    /// a large run's step results are stored once.
    async fn finish(&self, run_id: &str, result: &PlanResult) -> Result<(), StoreError>;

    /// Take a run id for this process while it runs, so that two executions of
    /// one run never overlap (each would run every step). The error says who
    /// holds it. A store that cannot tell processes apart holds nothing.
    async fn claim(&self, run_id: &str) -> Result<Claim, StoreError> {
        let _ = run_id;
        Ok(Claim::none())
    }
}

/// A run id held while it runs ([`RunStore::claim`]): [`release`](Claim::release)
/// lets go; dropping it lets go in the background.
pub struct Claim {
    release: Option<Release>,
}

type Release = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

impl Claim {
    /// A claim that holds nothing.
    pub fn none() -> Self {
        Claim { release: None }
    }

    /// A claim that runs `release` when let go.
    pub fn new<F>(release: impl FnOnce() -> F + Send + 'static) -> Self
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        Claim {
            release: Some(Box::new(move || Box::pin(release()))),
        }
    }

    /// Let go now, so the same run id can be taken again at once.
    pub async fn release(mut self) {
        if let Some(release) = self.release.take() {
            release().await;
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(release) = self.release.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(release());
        }
    }
}

/// Runs kept by [`InMemoryRunStore::new`]; the oldest go first.
pub const DEFAULT_MAX_RUNS: usize = 1_000;

/// Runs in memory, bounded: at most `max_runs`, the least recently begun dropped
/// first.
pub struct InMemoryRunStore {
    runs: Mutex<HashMap<String, RunRecord>>,
    /// Idempotency keys: fingerprint and answer (none while running).
    keys: Mutex<HashMap<String, (String, Option<String>)>>,
    order: Mutex<VecDeque<String>>,
    max_runs: usize,
    running: Arc<Mutex<HashSet<String>>>,
}

impl Default for InMemoryRunStore {
    fn default() -> Self {
        Self::with_max_runs(DEFAULT_MAX_RUNS)
    }
}

impl InMemoryRunStore {
    /// An empty store keeping up to 1 000 runs.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store keeping up to `max_runs` runs.
    pub fn with_max_runs(max_runs: usize) -> Self {
        InMemoryRunStore {
            runs: Mutex::new(HashMap::new()),
            keys: Mutex::new(HashMap::new()),
            order: Mutex::new(VecDeque::new()),
            max_runs: max_runs.max(1),
            running: Arc::default(),
        }
    }

    /// Runs held.
    pub fn len(&self) -> usize {
        self.runs.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn poisoned() -> StoreError {
    StoreError::unavailable("run store lock poisoned")
}

#[async_trait]
impl Idempotency for InMemoryRunStore {
    async fn idempotency_begin(
        &self,
        key: &str,
        fingerprint: &str,
    ) -> Result<IdempotencyBegin, StoreError> {
        let mut keys = self.keys.lock().map_err(|_| poisoned())?;
        Ok(match keys.get(key) {
            None => {
                keys.insert(key.to_string(), (fingerprint.to_string(), None));
                IdempotencyBegin::New
            }
            Some((theirs, _)) if theirs != fingerprint => IdempotencyBegin::Mismatch,
            Some((_, Some(answer))) => IdempotencyBegin::Replay(answer.clone()),
            Some((_, None)) => IdempotencyBegin::InFlight,
        })
    }

    async fn idempotency_finish(&self, key: &str, result: &str) -> Result<(), StoreError> {
        if let Some(entry) = self.keys.lock().map_err(|_| poisoned())?.get_mut(key) {
            entry.1 = Some(result.to_string());
        }
        Ok(())
    }

    async fn idempotency_abandon(&self, key: &str) -> Result<(), StoreError> {
        let mut keys = self.keys.lock().map_err(|_| poisoned())?;
        if keys.get(key).is_some_and(|(_, answer)| answer.is_none()) {
            keys.remove(key);
        }
        Ok(())
    }
}

#[async_trait]
impl RunStore for InMemoryRunStore {
    async fn load(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        let runs = self.runs.lock().map_err(|_| poisoned())?;
        Ok(runs.get(run_id).map(|record| RunRecord {
            run_id: record.run_id.clone(),
            plan: record.plan.clone(),
            steps: record.steps.clone(),
            owner: record.owner.clone(),
            result: record
                .result
                .clone()
                .map(|result| complete_result(result, &record.steps)),
        }))
    }

    async fn begin(
        &self,
        run_id: &str,
        plan: &Plan,
        owner: &axon_core::Owner,
    ) -> Result<(), StoreError> {
        let mut runs = self.runs.lock().map_err(|_| poisoned())?;
        if !runs.contains_key(run_id) {
            let mut order = self.order.lock().map_err(|_| poisoned())?;
            order.push_back(run_id.to_string());
            while order.len() > self.max_runs {
                if let Some(old) = order.pop_front() {
                    runs.remove(&old);
                }
            }
        }
        let record = runs.entry(run_id.to_string()).or_insert_with(|| RunRecord {
            run_id: run_id.to_string(),
            plan: plan.clone(),
            steps: BTreeMap::new(),
            result: None,
            owner: owner.clone(),
        });
        if record.plan != *plan {
            record.plan = plan.clone();
        }
        record.result = None;
        Ok(())
    }

    async fn checkpoint(&self, run_id: &str, step: &StepOutcome) -> Result<(), StoreError> {
        let mut runs = self.runs.lock().map_err(|_| poisoned())?;
        if let Some(record) = runs.get_mut(run_id) {
            record.steps.insert(step.index, step.clone());
        }
        Ok(())
    }

    async fn finish(&self, run_id: &str, result: &PlanResult) -> Result<(), StoreError> {
        let mut runs = self.runs.lock().map_err(|_| poisoned())?;
        if let Some(record) = runs.get_mut(run_id) {
            record.result = Some(result.clone());
        }
        Ok(())
    }

    async fn claim(&self, run_id: &str) -> Result<Claim, StoreError> {
        let mut running = self.running.lock().map_err(|_| poisoned())?;
        if !running.insert(run_id.to_string()) {
            return Err(StoreError::conflict(format!(
                "run {run_id} is running already; wait for it to finish, or cancel it"
            )));
        }
        let (running, id) = (self.running.clone(), run_id.to_string());
        Ok(Claim::new(move || async move {
            if let Ok(mut running) = running.lock() {
                running.remove(&id);
            }
        }))
    }
}
