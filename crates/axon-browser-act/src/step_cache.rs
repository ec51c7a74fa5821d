//! The act cache: a plan step translated once is not translated again on a
//! page of the same shape. An entry is stored under the normalised step text
//! and the page's shape — its URL pattern (digits as `:n`, no query) and the
//! interactive skeleton of its snapshot (the roles of its controls) — and holds
//! the action with its element by role and exact name.
//!
//! A hit is checked before it is used (self-healing): the element must still
//! be on the page, exactly one of its role and name. If it is not, or the
//! action fails, the step is translated again and the entry replaced or
//! dropped. So a second run of the same plan makes no translator call (no
//! LLM call, no heuristic) where the pages have not changed, and a changed
//! page costs one translation.
//!
//! Entries live in an [`ActStore`]: [`MemoryActStore`] in the library, the
//! SQLite store in the `axon` binary (so the second run may be another
//! process).

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Action, ActionKind, Decision};
use axon_browser::SnapshotNode;
use axon_browser::layer::INTERACTIVE;

/// A translated step as kept in the cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CachedStep {
    /// The action, its element by role and name (no snapshot ref: refs do not
    /// outlive the page).
    pub action: Action,
    /// The translator's sentence about it.
    pub message: String,
    /// The translator's confidence.
    pub confidence: f64,
}

/// Where translated steps are kept. Failures to read or write are the
/// store's to log: the cache is an optimisation, a step never fails for it.
#[async_trait]
pub trait ActStore: Send + Sync + 'static {
    /// The entry under `key`.
    async fn get(&self, key: &str) -> Option<CachedStep>;
    /// Store (or replace) the entry under `key`.
    async fn put(&self, key: &str, step: &CachedStep);
    /// Drop the entry under `key`.
    async fn remove(&self, key: &str);
}

/// Entries a [`MemoryActStore`] keeps at most.
pub const MEMORY_ENTRIES: usize = 10_000;

/// An act cache in memory, bounded to [`MEMORY_ENTRIES`]: the library's
/// default.
#[derive(Default)]
pub struct MemoryActStore {
    entries: Mutex<HashMap<String, CachedStep>>,
}

#[async_trait]
impl ActStore for MemoryActStore {
    async fn get(&self, key: &str) -> Option<CachedStep> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(key).cloned()
    }
    async fn put(&self, key: &str, step: &CachedStep) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MEMORY_ENTRIES && !entries.contains_key(key) {
            // Full: make room (which one goes matters little for a cache of
            // translations; a dropped one costs one translation).
            if let Some(victim) = entries.keys().next().cloned() {
                entries.remove(&victim);
            }
        }
        entries.insert(key.to_string(), step.clone());
    }
    async fn remove(&self, key: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.remove(key);
    }
}

/// An act cache that keeps nothing: every step is translated (to compare
/// translators, or to test one).
pub struct NoActStore;

#[async_trait]
impl ActStore for NoActStore {
    async fn get(&self, _: &str) -> Option<CachedStep> {
        None
    }
    async fn put(&self, _: &str, _: &CachedStep) {}
    async fn remove(&self, _: &str) {}
}

/// The cache key of `step` on the page at `url` with `nodes`.
pub fn key(step: &str, url: &str, nodes: &[SnapshotNode]) -> String {
    let mut skeleton: Vec<&str> = nodes
        .iter()
        .filter(|n| INTERACTIVE.contains(&n.role.as_str()))
        .map(|n| n.role.as_str())
        .collect();
    skeleton.sort_unstable();
    let shape = json!({
        "step": normalise(step),
        "url": url_pattern(url),
        "skeleton": skeleton,
    });
    format!("act:{}", axon_core::canonical::sha256_hex(&shape))
}

/// Lower case, words separated by one space, no trailing full stop: "Click the
/// Log in button." and "click the log in  button" are one step.
fn normalise(step: &str) -> String {
    let words: Vec<&str> = step.split_whitespace().collect();
    words.join(" ").trim_end_matches(['.', '!']).to_lowercase()
}

/// The URL without query and fragment, with each run of digits as `:n`
/// (`/orders/1234` and `/orders/98` are one page kind).
fn url_pattern(url: &str) -> String {
    let base = url.split(['?', '#']).next().unwrap_or_default();
    let mut out = String::with_capacity(base.len());
    let mut in_digits = false;
    for c in base.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push_str(":n");
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// Whether an action addresses an element (and so must find it again).
fn targets(action: &Action) -> bool {
    match action.action {
        ActionKind::Click | ActionKind::Select => true,
        ActionKind::Type | ActionKind::Hover | ActionKind::Upload => {
            action.args.reference.is_some() || action.args.role.is_some()
        }
        _ => false,
    }
}

/// Whether a decision may be kept at all: not one whose second element is a
/// ref of this page (a drag's `onto`), nor one about the session rather than
/// the page's shape (a dialog, a tab).
fn keepable(action: &Action) -> bool {
    !matches!(
        action.action,
        ActionKind::Drag | ActionKind::HandleDialog | ActionKind::SelectTab | ActionKind::CloseTab
    )
}

/// What to store for a decision that worked: its element by role and name
/// (filled in from the snapshot node its ref names), or `None` when the
/// element has no name to find it by again.
pub fn entry(decision: &Decision, nodes: &[SnapshotNode]) -> Option<CachedStep> {
    let mut action = decision.action.clone();
    if !keepable(&action) {
        return None;
    }
    if targets(&action) {
        if let Some(r) = action.args.reference.take() {
            let node = nodes.iter().find(|n| n.reference.as_ref() == Some(&r))?;
            action.args.role = Some(node.role.clone());
            action.args.name = Some(node.name.clone());
        }
        let named = action
            .args
            .name
            .as_deref()
            .is_some_and(|n| !n.trim().is_empty());
        if action.args.role.is_none() || !named {
            return None;
        }
    }
    Some(CachedStep {
        action,
        message: decision.message.clone(),
        confidence: decision.confidence,
    })
}

/// A cached step made fit for this page: its element must be here, exactly one
/// of its role and name (its ref is this snapshot's); `None` when it is not
/// (the entry is stale: translate again).
pub fn revalidate(cached: &CachedStep, nodes: &[SnapshotNode]) -> Option<Decision> {
    let mut action = cached.action.clone();
    if targets(&action) {
        let (role, name) = (action.args.role.as_deref()?, action.args.name.as_deref()?);
        let mut matching = nodes
            .iter()
            .filter(|n| n.role == role && n.name.eq_ignore_ascii_case(name));
        let node = matching.next()?;
        if matching.next().is_some() {
            return None;
        }
        action.args.reference = node.reference.clone();
    }
    Some(Decision {
        action,
        confidence: cached.confidence,
        message: cached.message.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ActionArgs;

    fn node(r: &str, role: &str, name: &str) -> SnapshotNode {
        SnapshotNode::element(role, name, r)
    }

    #[test]
    fn one_step_on_one_page_kind_is_one_key() {
        let page = [
            node("e1", "button", "Log in"),
            node("e2", "textbox", "User"),
        ];
        let other = [
            node("e9", "textbox", "User"),
            node("e8", "button", "Log in"),
        ];
        assert_eq!(
            key("Click the Log in button.", "http://h/u/12?x=1", &page),
            key("click the  log in button", "http://h/u/7", &other),
        );
        assert_ne!(
            key("Click the Log in button", "http://h/u/12", &page),
            key("Click the Log in button", "http://h/v/12", &page),
        );
        assert_ne!(
            key("Click the Log in button", "http://h/u/12", &page),
            key("Click the Log in button", "http://h/u/12", &page[..1]),
        );
    }

    #[test]
    fn a_hit_finds_its_element_again_or_is_stale() {
        let decided = Decision {
            action: Action {
                action: ActionKind::Click,
                args: ActionArgs {
                    reference: Some("e1".into()),
                    ..ActionArgs::default()
                },
            },
            confidence: 1.0,
            message: "Click button \"Log in\"".into(),
        };
        let page = [node("e1", "button", "Log in")];
        let stored = entry(&decided, &page).unwrap();
        assert_eq!(stored.action.args.reference, None);
        assert_eq!(stored.action.args.name.as_deref(), Some("Log in"));
        let later = [node("e5", "link", "Help"), node("e6", "button", "Log in")];
        let hit = revalidate(&stored, &later).unwrap();
        assert_eq!(hit.action.args.reference.as_deref(), Some("e6"));
        assert!(revalidate(&stored, &[node("e6", "button", "Sign in")]).is_none());
        let twice = [
            node("e6", "button", "Log in"),
            node("e7", "button", "Log in"),
        ];
        assert!(
            revalidate(&stored, &twice).is_none(),
            "ambiguous: translate"
        );
        assert!(entry(&decided, &[node("e1", "button", " ")]).is_none());
    }
}
