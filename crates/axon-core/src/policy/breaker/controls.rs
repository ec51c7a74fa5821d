//! The breakers as operators see them: the state of a tool's (and of its keys'),
//! and reset or isolate by hand, in the cluster's store too when there is one.

use std::time::Duration;

use smol_str::SmolStr;

use super::state::BreakerState;
use crate::executor::Executor;

impl Executor {
    /// The state of a tool's breaker.
    pub fn breaker_state(&self, tool: &str) -> Option<BreakerState> {
        self.entry(tool).map(|e| e.own.state.breaker.state())
    }

    /// How long a tool's open breaker still rejects (see
    /// [`Breaker::next_probe_in`](super::Breaker::next_probe_in)).
    pub fn breaker_next_probe(&self, tool: &str) -> Option<Duration> {
        self.entry(tool)
            .and_then(|e| e.own.state.breaker.next_probe_in())
    }

    /// The state of a tool's breaker across the cluster: the shared
    /// breaker's when there is one and it answers, else this process's.
    pub async fn cluster_breaker_state(&self, tool: &str) -> Option<BreakerState> {
        let entry = self.entry(tool)?;
        if let Some(shared) = &entry.shared_breakers
            && let Ok(state) = shared.state(tool).await
        {
            return Some(state);
        }
        Some(entry.own.state.breaker.state())
    }

    /// Close a tool's breaker by hand, in the shared store too (the whole
    /// cluster's); false if there is no such tool.
    pub async fn reset_breaker(&self, tool: &str) -> bool {
        let Some(entry) = self.entry(tool) else {
            return false;
        };
        if let Some(shared) = &entry.shared_breakers {
            let _ = shared.reset(tool).await;
        }
        entry.own.state.breaker.reset();
        true
    }

    /// Open a tool's breaker until reset (an operator taking a dependency
    /// out of service), in the shared store too; false if there is no such
    /// tool.
    pub async fn isolate_breaker(&self, tool: &str) -> bool {
        let Some(entry) = self.entry(tool) else {
            return false;
        };
        if let Some(shared) = &entry.shared_breakers {
            let _ = shared.isolate(tool).await;
        }
        entry.own.state.breaker.isolate();
        true
    }
}

/// One dependency key of a tool whose breaker is not closed, as `/v1/breakers`
/// and `GET /v1/tools/{name}` list them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct KeyBreaker {
    /// An origin, `server:<name>` or a template's value.
    #[schemars(with = "String")]
    pub key: SmolStr,
    /// Open, half-open or isolated.
    pub state: BreakerState,
    /// While open: ms until a probe is let through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl Executor {
    /// The keys of a tool (its origins, its server) whose breaker is not
    /// closed, by key; empty for an unknown tool.
    pub fn open_keys(&self, tool: &str) -> Vec<KeyBreaker> {
        let Some(entry) = self.entry(tool) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(server) = &entry.server {
            let state = server.state.breaker.state();
            if state != BreakerState::Closed
                && let Some(key) = &server.key
            {
                out.push(KeyBreaker {
                    key: key.clone(),
                    state,
                    retry_after_ms: retry_after_ms(server.state.breaker.next_probe_in()),
                });
            }
        }
        if let Some(keyed) = &entry.keyed {
            out.extend(
                keyed
                    .not_closed()
                    .into_iter()
                    .map(|(key, state, wait)| KeyBreaker {
                        key,
                        state,
                        retry_after_ms: retry_after_ms(wait),
                    }),
            );
        }
        out
    }

    /// Close the breaker of one key of a tool (an origin, `server:<name>`),
    /// in the cluster's store too; false if the tool keeps no such key.
    pub async fn reset_cluster_key(&self, tool: &str, key: &str) -> bool {
        let Some(found) = self.key_state(tool, key) else {
            return false;
        };
        if let Some(shared) = self.entry(tool).and_then(|e| e.shared_breakers.as_ref()) {
            let _ = shared.reset(&found.name).await;
        }
        found.state.breaker.reset();
        true
    }

    /// Close the breaker of one key of a tool in this process; false if the
    /// tool keeps no such key.
    pub fn reset_key(&self, tool: &str, key: &str) -> bool {
        self.key_state(tool, key)
            .map(|k| k.state.breaker.reset())
            .is_some()
    }

    /// How many keys a tool keeps state for now (bounded by
    /// [`MAX_KEYS_PER_TOOL`](crate::state::MAX_KEYS_PER_TOOL)).
    pub fn keys_kept(&self, tool: &str) -> u64 {
        self.entry(tool)
            .and_then(|e| e.keyed.as_ref())
            .map_or(0, |k| k.len())
    }

    fn key_state(&self, tool: &str, key: &str) -> Option<std::sync::Arc<crate::state::KeyState>> {
        let entry = self.entry(tool)?;
        if let Some(server) = &entry.server
            && server.key.as_deref() == Some(key)
        {
            return Some(server.clone());
        }
        entry.keyed.as_ref()?.find(key)
    }
}

fn retry_after_ms(wait: Option<Duration>) -> Option<u64> {
    wait.map(|d| d.as_millis() as u64)
}
