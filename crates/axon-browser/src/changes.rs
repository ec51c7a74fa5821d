//! What an action changed: every action that may change the page (a click,
//! typing, a selection, a key, a drag, a navigation) answers with the page's
//! change since the agent last saw it, so that the common loop — act, read
//! what happened, act — needs no `browser_snapshot` call in between (an agent
//! pays a model round trip per call).
//!
//! The agent's view is the session's last snapshot: the one `browser_snapshot`
//! returned, or the one the previous action's changes brought it up to. After
//! the action has settled (`crate::settle`: the requests it started, then DOM
//! quiet, on evidence), the page is read once and compared with that view:
//! elements that are new or changed (value, states, name) are listed with their
//! refs under their ancestors, elements gone are listed apart. A new page (the
//! URL changed, or the agent had no view yet) is listed whole, as
//! `browser_snapshot` would. Both are bounded ([`MAX_LINES`]); the call's
//! `snapshot` argument (`changes`, `full`, `none`) or `[browser]
//! snapshot_after_action` chooses.
//!
//! Playwright MCP answers every action with the whole snapshot; this answers
//! with the part that changed, which is what the next step is chosen from.

use std::collections::HashSet;
use std::time::Duration;

use axon_core::ToolContext;
use chromiumoxide::Page;
use serde_json::{Value, json};

use crate::config::AfterAction;
use crate::session::Browsers;
use crate::settle::{self, Settled, Watch};
use crate::snapshot::{self, SnapshotArgs, SnapshotNode};

/// The most lines of changes (or of a new page) an action answers with; the
/// rest is counted, and `browser_snapshot` reads it.
pub(crate) const MAX_LINES: usize = 300;

/// The longest the page is read for after an action.
const MAX_READ: Duration = Duration::from_secs(5);

/// The most removed elements listed by name (the rest are counted).
const MAX_REMOVED: usize = 12;

/// How a tool takes part: whether it answers with changes, and whether it
/// settles first (tools that wait for their own navigation do not, but for
/// `browser_navigate`).
pub(crate) fn part(tool: &str, browsers: &Browsers) -> Option<Option<Duration>> {
    let t = &browsers.config().timeouts;
    let ms = |ms: u64| Some(Some(Duration::from_millis(ms)));
    match tool {
        "browser_click" | "browser_hover" | "browser_drag" => ms(t.click_ms),
        "browser_type"
        | "browser_clear_input"
        | "browser_select_option"
        | "browser_fill_form"
        | "browser_upload_file" => ms(t.type_ms),
        "browser_press_key" => ms(t.press_key_ms),
        "browser_scroll" => ms(t.scroll_ms),
        // A page that draws itself after its load (an app that fetches its
        // layout, a script compiled in the page) is waited for as an action
        // is: the answer shows the page drawn, not "Loading…".
        "browser_navigate" => ms(t.navigate_ms),
        // These wait for the load (or answer a dialog) themselves.
        "browser_navigate_back"
        | "browser_navigate_forward"
        | "browser_submit_form"
        | "browser_search"
        | "browser_handle_dialog" => Some(None),
        _ => None,
    }
}

/// The page before an action: its URL, and its requests and DOM watched.
pub(crate) struct Before {
    page: Page,
    url: String,
    watch: Option<(Watch, Duration)>,
}

/// Look at the page before the action: `None` when it cannot be read (a
/// session not open yet answers without changes; the action itself says why
/// it failed).
pub(crate) async fn before(
    browsers: &Browsers,
    ctx: &ToolContext,
    settles: Option<Duration>,
) -> Option<Before> {
    let page = browsers.page_for(ctx).await.ok()?;
    let url = page.url().await.ok().flatten().unwrap_or_default();
    let watch = match settles {
        Some(limit) => settle::watch(&page).await.map(|w| (w, limit)),
        None => None,
    };
    Some(Before { page, url, watch })
}

/// After a failed action: stop watching the page.
pub(crate) fn forget(before: Before) {
    if let Some((watch, _)) = before.watch {
        settle::unwatch(&before.page, watch);
    }
}

/// After a successful action: let the page settle, read it, keep it as the
/// session's view and answer what changed (`None` when the page cannot be
/// read: the action's own result stands).
pub(crate) async fn after(
    browsers: &Browsers,
    ctx: &ToolContext,
    before: Before,
    show: AfterAction,
) -> Option<Value> {
    let settled = match before.watch {
        Some((watch, limit)) => Some(settle::settle(&before.page, watch, limit).await),
        None => None,
    };
    // A click that opened a tab the session follows is read on that tab.
    let page = browsers.page_for(ctx).await.ok()?;
    // A page that stops answering (a dialog it opened after the action is
    // held open) leaves the action's own result standing.
    let read = tokio::time::timeout(MAX_READ, snapshot::read(&page)).await;
    let (url, title, nodes) = read.ok()?.ok()?;
    let previous = browsers.swap_snapshot(ctx, nodes.clone()).await;
    let new_page = previous.is_empty() || document(&url) != document(&before.url);
    let mut out = json!({});
    if let Some(s) = settled {
        out["waited"] = waited(&s);
    }
    if new_page || show == AfterAction::Full || url != before.url {
        out["url"] = json!(url);
        out["title"] = json!(title);
    }
    let (lines, left_out) = if new_page || show == AfterAction::Full {
        out["page"] = json!(if new_page { "new" } else { "full" });
        lines_of(&nodes)
    } else {
        let removed = removed(&previous, &nodes);
        if !removed.is_empty() {
            out["removed"] = json!(removed);
        }
        let args = SnapshotArgs {
            max_nodes: usize::MAX,
            nodes: false,
            reference: None,
            depth: None,
            find: None,
            changes_since: true,
        };
        let view = snapshot::view(nodes, &args, &previous).ok()?;
        out["page"] = json!(if view.nodes.is_empty() && removed.is_empty() {
            "same"
        } else {
            "changed"
        });
        lines_of(&view.nodes)
    };
    out["text"] = json!(lines);
    if left_out > 0 {
        out["left_out"] = json!(left_out);
    }
    Some(out)
}

/// A URL without its fragment: the document it names (a `#section` link
/// stays on the page).
fn document(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

/// What the settle waited for.
fn waited(s: &Settled) -> Value {
    json!({"ms": s.waited.as_millis() as u64, "requests": s.requests, "until": s.until.as_str()})
}

/// The elements of `previous` no longer on the page, as snapshot lines
/// (unindented), at most [`MAX_REMOVED`] and a count of the rest.
fn removed(previous: &[SnapshotNode], now: &[SnapshotNode]) -> Vec<String> {
    let live: HashSet<&str> = now.iter().filter_map(|n| n.reference.as_deref()).collect();
    let gone: Vec<&SnapshotNode> = previous
        .iter()
        .filter(|n| n.reference.as_deref().is_some_and(|r| !live.contains(r)))
        .filter(|n| n.actionable() || !n.name.is_empty())
        .collect();
    let mut lines: Vec<String> = gone
        .iter()
        .take(MAX_REMOVED)
        .map(|n| {
            let flat = SnapshotNode {
                depth: 0,
                ..(*n).clone()
            };
            flat.line().trim_end().trim_start_matches("- ").to_string()
        })
        .collect();
    if gone.len() > MAX_REMOVED {
        lines.push(format!("and {} more", gone.len() - MAX_REMOVED));
    }
    lines
}

/// The nodes as snapshot text, at most [`MAX_LINES`] of them, and how many
/// were left out.
fn lines_of(nodes: &[SnapshotNode]) -> (String, usize) {
    let shown = &nodes[..nodes.len().min(MAX_LINES)];
    (
        shown.iter().map(SnapshotNode::line).collect(),
        nodes.len() - shown.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fragment_stays_on_the_document() {
        assert_eq!(document("http://h/a#x"), "http://h/a");
        assert_eq!(document("http://h/a"), "http://h/a");
    }

    #[test]
    fn removed_elements_are_named_and_counted() {
        let before: Vec<SnapshotNode> = (0..15)
            .map(|i| SnapshotNode::element("button", &format!("B{i}"), &format!("e{i}")))
            .collect();
        let now = vec![before[0].clone()];
        let gone = removed(&before, &now);
        assert_eq!(gone.len(), MAX_REMOVED + 1);
        assert_eq!(gone[0], "button \"B1\" [ref=e1]");
        assert_eq!(gone[MAX_REMOVED], "and 2 more");
        assert!(removed(&before, &before).is_empty());
    }

    #[test]
    fn lines_are_bounded() {
        let many: Vec<SnapshotNode> = (0..MAX_LINES + 5)
            .map(|i| SnapshotNode::element("link", "L", &format!("e{i}")))
            .collect();
        let (text, left) = lines_of(&many);
        assert_eq!(left, 5);
        assert_eq!(text.lines().count(), MAX_LINES);
    }
}
