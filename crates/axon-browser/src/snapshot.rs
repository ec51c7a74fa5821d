//! `browser_snapshot`: Chromium's accessibility tree, pruned to what an agent
//! needs to pick its next action.
//!
//! Kept: interactive elements (buttons, links, fields, options, …), headings,
//! landmarks, table structure, images with a name, and text not already
//! carried by an element's name. Dropped: ignored (hidden) nodes and generic
//! wrappers, whose children move up. Every element gets a `ref` (`e` + its
//! backend node id, stable while the element lives, so an unchanged element
//! keeps its ref from one snapshot to the next) that the element tools take
//! as an address.
//!
//! Pages do not always say what is a control, so the snapshot reaches further
//! than the accessibility tree ([`Reach`]):
//! - an element that acts as a control without a role (a click listener or an
//!   `onclick`, `cursor: pointer` that its parent does not have, a
//!   `tabindex`) is kept with its text as its name and the state `clickable`;
//! - a field with no accessible name takes the text just before it (a
//!   checkbox or radio, the text just after), and says so: `textbox
//!   "Password" (by nearby text)`;
//! - the documents of iframes (same-origin and cross-origin: the browser runs
//!   them in the page's process) are read under their `iframe` node; open
//!   shadow roots are already in the tree.
//!
//! Here: the tool, reading the tree and the view of it; the walk that
//! prunes it is `snapshot/prune.rs`, what reaches past the tree
//! `snapshot/reach.rs`, labels by layout `snapshot/labels.rs`.

use std::collections::{HashMap, HashSet};

use axon_core::ToolError;
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cdp::{self, Evaluated};

mod labels;
mod prune;
mod reach;

#[cfg(test)]
pub(crate) use prune::prune;
pub(crate) use prune::prune_with;
pub(crate) use reach::{Reach, reach};

/// `browser_snapshot` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotArgs {
    /// Node limit (the rest counted in `truncated`).
    #[serde(default = "default_max_nodes")]
    pub max_nodes: usize,
    /// Also return the nodes as a list.
    #[serde(default)]
    pub nodes: bool,
    /// Only this ref's subtree.
    #[serde(rename = "ref", default)]
    pub reference: Option<String>,
    /// Max depth.
    #[serde(default)]
    pub depth: Option<usize>,
    /// Text or /regex/: only matching nodes, with their path.
    #[serde(default)]
    pub find: Option<String>,
    /// Only changes since the last snapshot.
    #[serde(default)]
    pub changes_since: bool,
}

fn default_max_nodes() -> usize {
    500
}

/// One node of the pruned tree.
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
pub struct SnapshotNode {
    /// The address for element tools (`{"ref": "e42"}`); text has none.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The ARIA role (`text` for a run of text).
    pub role: String,
    /// The accessible name (or the text).
    pub name: String,
    /// Nesting depth in the pruned tree.
    pub depth: usize,
    /// A field's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// States that hold: checked, disabled, expanded, focused, required,
    /// selected, pressed, and `level=N` for headings; both ways where an
    /// element can be either (`collapsed` for a header that can expand,
    /// `unchecked` for a box that can be ticked); `multiline` for a text box
    /// of several lines (a `<textarea>`), `password` for a password field;
    /// `clickable`: a control without a role.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
    /// `nearby text`: the name is the text beside the field, not its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_from: Option<String>,
}

impl SnapshotNode {
    /// Whether an agent can act on this node: an interactive role, or an
    /// element that acts as a control without one.
    pub fn actionable(&self) -> bool {
        self.reference.is_some()
            && (INTERACTIVE.contains(&self.role.as_str()) || self.is_clickable())
    }

    /// An element kept because it behaves as a control (click listener,
    /// pointer cursor, tabindex) though its role does not say so.
    pub fn is_clickable(&self) -> bool {
        self.states.iter().any(|s| s == CLICKABLE)
    }

    /// The node as one line of the snapshot text, indented by its depth:
    /// `- button "Log in" [ref=e12]`.
    pub fn line(&self) -> String {
        let mut s = format!("{}- {}", "  ".repeat(self.depth), self.role);
        if !self.name.is_empty() {
            s.push_str(&format!(" {:?}", self.name));
        }
        if let Some(from) = &self.name_from {
            s.push_str(&format!(" (by {from})"));
        }
        if let Some(value) = &self.value {
            s.push_str(&format!(" value={value:?}"));
        }
        for state in &self.states {
            s.push_str(&format!(" [{state}]"));
        }
        if let Some(r) = &self.reference {
            s.push_str(&format!(" [ref={r}]"));
        }
        s.push('\n');
        s
    }
}

/// The state of an element kept because it acts as a control.
pub const CLICKABLE: &str = "clickable";

/// Where a name taken from the text around a field came from.
pub const NEARBY_TEXT: &str = "nearby text";

impl SnapshotNode {
    /// An element with a ref at the top level, nothing else known: a node
    /// written by hand (the translators' tests, a cached step's check).
    pub fn element(role: &str, name: &str, reference: &str) -> Self {
        SnapshotNode {
            reference: Some(reference.into()),
            role: role.into(),
            name: name.into(),
            depth: 0,
            value: None,
            states: Vec::new(),
            name_from: None,
        }
    }
}

/// The page's pruned accessibility tree.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct Snapshot {
    /// The page URL.
    pub url: String,
    /// The page title.
    pub title: String,
    /// The nodes, in document order (only when asked for: `nodes: true`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<SnapshotNode>,
    /// The tree as indented lines (`- button "Log in" [ref=e12]`): what an
    /// agent reads.
    pub text: String,
    /// Nodes left out past `max_nodes`.
    pub truncated: usize,
}

/// Roles an agent acts on.
pub const INTERACTIVE: [&str; 22] = [
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
    "textarea",
    // Chromium's role for a <details> element's <summary>.
    "DisclosureTriangle",
    "date",
    "time",
    "datetime",
];

/// The page's accessibility snapshot (what `browser_snapshot` answers), at
/// most `max_nodes` nodes, each interactive one with its ref.
pub async fn snapshot(page: &Page, max_nodes: usize) -> Result<Snapshot, ToolError> {
    let (url, title, all) = read(page).await?;
    Ok(assemble(url, title, all, max_nodes))
}

/// The snapshot's text and counts over `nodes`, cut at `max_nodes`.
pub(crate) fn assemble(
    url: String,
    title: String,
    mut nodes: Vec<SnapshotNode>,
    max_nodes: usize,
) -> Snapshot {
    let truncated = nodes.len().saturating_sub(max_nodes);
    nodes.truncate(max_nodes);
    let text = render(&nodes, truncated);
    Snapshot {
        url,
        title,
        nodes,
        text,
        truncated,
    }
}

/// The page's URL, title and whole pruned tree.
pub(crate) async fn read(page: &Page) -> Result<(String, String, Vec<SnapshotNode>), ToolError> {
    // Chromium serialises the accessibility tree apart from the DOM: right after
    // a navigation (sooner seen on a busy machine) it can still be the previous
    // document's tree, or an empty root. Read it until it is this document's:
    // its root named as the document's title, and not empty when the body is not.
    let mut tries = 0;
    let (nodes, url, title) = loop {
        let tree = cdp::send(page, "Accessibility.getFullAXTree", json!({})).await?;
        let page_state = cdp::evaluate(
            page,
            "({url: location.href, title: document.title, body: document.body ? document.body.childElementCount : 0})",
            true,
        )
        .await?;
        let (url, title, body) = match page_state {
            Evaluated::Value(v) => (
                v["url"].as_str().unwrap_or_default().to_string(),
                v["title"].as_str().unwrap_or_default().to_string(),
                v["body"].as_u64().unwrap_or(0),
            ),
            _ => (String::new(), String::new(), 0),
        };
        let nodes = tree["nodes"].as_array().cloned().unwrap_or_default();
        tries += 1;
        if tries >= 40 || tree_is_current(&nodes, &title, body) {
            break (nodes, url, title);
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    let reach = reach(page).await;
    Ok((url, title, prune_with(&nodes, &reach)))
}

/// The part of a snapshot `args` asks for (`ref`, `depth`, `find`,
/// `changes_since` against `previous`), and the `matches` / `removed` counts.
pub(crate) fn view(
    mut nodes: Vec<SnapshotNode>,
    args: &SnapshotArgs,
    previous: &[SnapshotNode],
) -> Result<View, ToolError> {
    let removed = args.changes_since.then(|| {
        let now: HashSet<&str> = nodes
            .iter()
            .filter_map(|n| n.reference.as_deref())
            .collect();
        previous
            .iter()
            .filter_map(|n| n.reference.as_deref())
            .filter(|r| !now.contains(r))
            .count()
    });
    if let Some(r) = &args.reference {
        let Some(at) = nodes.iter().position(|n| n.reference.as_ref() == Some(r)) else {
            return Err(ToolError::failed(format!(
                "/ref: no element {r} on the page now (take a new browser_snapshot)"
            ))
            .with_code("stale_ref"));
        };
        let base = nodes[at].depth;
        let end = nodes[at + 1..]
            .iter()
            .position(|n| n.depth <= base)
            .map_or(nodes.len(), |p| at + 1 + p);
        nodes = nodes.drain(at..end).collect();
        for n in &mut nodes {
            n.depth -= base;
        }
    }
    if let Some(depth) = args.depth {
        nodes.retain(|n| n.depth <= depth);
    }
    let mut matches = None;
    if let Some(find) = &args.find {
        let pattern = Finder::new(find)?;
        let hit: Vec<bool> = nodes.iter().map(|n| pattern.matches(n)).collect();
        matches = Some(hit.iter().filter(|h| **h).count());
        nodes = with_ancestors(nodes, &hit);
    }
    if args.changes_since {
        let before: HashMap<&str, &SnapshotNode> = previous
            .iter()
            .filter_map(|n| n.reference.as_deref().map(|r| (r, n)))
            .collect();
        let texts: HashSet<&str> = previous
            .iter()
            .filter(|n| n.reference.is_none())
            .map(|n| n.name.as_str())
            .collect();
        let mut hit = Vec::with_capacity(nodes.len());
        for n in &mut nodes {
            let changed = match n.reference.as_deref().map(|r| before.get(r)) {
                Some(None) => Some("new"),
                Some(Some(old))
                    if old.role != n.role
                        || old.name != n.name
                        || old.value != n.value
                        || unfocused(&old.states) != unfocused(&n.states) =>
                {
                    Some("changed")
                }
                Some(Some(_)) => None,
                None => (!texts.contains(n.name.as_str())).then_some("new"),
            };
            if let Some(mark) = changed {
                n.states.push(mark.to_string());
            }
            hit.push(changed.is_some());
        }
        nodes = with_ancestors(nodes, &hit);
    }
    Ok(View {
        nodes,
        matches,
        removed,
    })
}

/// An element's states but `focused`: the focus moving to what was just
/// clicked is not a change an agent chooses its next step by.
fn unfocused(states: &[String]) -> Vec<&str> {
    states
        .iter()
        .map(String::as_str)
        .filter(|s| *s != "focused")
        .collect()
}

/// The part of a snapshot asked for, and its counts.
#[derive(Debug)]
pub(crate) struct View {
    pub nodes: Vec<SnapshotNode>,
    /// With `find`: the nodes that matched.
    pub matches: Option<usize>,
    /// With `changes_since`: the last snapshot's elements no longer there.
    pub removed: Option<usize>,
}

/// The nodes `hit` marks, each under its ancestors (in the order of the tree).
fn with_ancestors(nodes: Vec<SnapshotNode>, hit: &[bool]) -> Vec<SnapshotNode> {
    let mut keep = vec![false; nodes.len()];
    for (i, _) in hit.iter().enumerate().filter(|(_, h)| **h) {
        keep[i] = true;
        let mut depth = nodes[i].depth;
        for j in (0..i).rev() {
            if depth == 0 {
                break;
            }
            if nodes[j].depth < depth {
                keep[j] = true;
                depth = nodes[j].depth;
            }
        }
    }
    nodes
        .into_iter()
        .zip(keep)
        .filter_map(|(n, k)| k.then_some(n))
        .collect()
}

/// `find`: a case-insensitive text, or `/regex/`.
enum Finder {
    Text(String),
    Regex(regex::Regex),
}

impl Finder {
    fn new(find: &str) -> Result<Self, ToolError> {
        match find.strip_prefix('/').and_then(|f| f.strip_suffix('/')) {
            Some(pattern) if !pattern.is_empty() => regex::RegexBuilder::new(pattern)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map(Finder::Regex)
                .map_err(|e| ToolError::invalid_arguments(format!("/find: {e}"))),
            _ => Ok(Finder::Text(find.to_lowercase())),
        }
    }

    fn matches(&self, n: &SnapshotNode) -> bool {
        let fields = [Some(n.name.as_str()), n.value.as_deref()];
        fields.into_iter().flatten().any(|f| match self {
            Finder::Text(t) => f.to_lowercase().contains(t.as_str()),
            Finder::Regex(r) => r.is_match(f),
        })
    }
}

/// Whether a `getFullAXTree` answer is the current document's: its root web
/// area carries the document's title, and it has more than the root when the
/// body has elements.
fn tree_is_current(nodes: &[Value], title: &str, body_elements: u64) -> bool {
    let root = nodes.iter().find(|n| n["role"]["value"] == "RootWebArea");
    let Some(root) = root else {
        return true;
    };
    let named = root["name"]["value"].as_str().unwrap_or_default();
    let same_title = title.is_empty() || named == title;
    let filled = body_elements == 0
        || nodes.len() > 1 && root["childIds"].as_array().is_some_and(|c| !c.is_empty());
    same_title && filled
}

fn render(nodes: &[SnapshotNode], truncated: usize) -> String {
    let mut text: String = nodes.iter().map(SnapshotNode::line).collect();
    if truncated > 0 {
        text.push_str(&format!("… {truncated} more nodes\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_or_empty_tree_is_not_current() {
        let root = |name: &str, children: Value| json!({"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": name}, "childIds": children});
        let child =
            json!({"nodeId": "2", "role": {"value": "button"}, "name": {"value": "Log in"}});
        assert!(tree_is_current(
            &[root("Sign in", json!(["2"])), child.clone()],
            "Sign in",
            5
        ));
        assert!(
            !tree_is_current(
                &[root("Welcome", json!(["2"])), child.clone()],
                "Sign in",
                5
            ),
            "the previous page's tree"
        );
        assert!(
            !tree_is_current(&[root("Sign in", json!([]))], "Sign in", 5),
            "an empty root over a full body"
        );
        assert!(
            tree_is_current(&[root("", json!([]))], "", 0),
            "an empty page"
        );
    }

    fn node(id: &str, role: &str, name: &str, children: &[&str], backend: i64) -> Value {
        json!({
            "nodeId": id, "ignored": false, "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name}, "childIds": children,
            "backendDOMNodeId": backend,
        })
    }

    #[test]
    fn prunes_wrappers_and_repeated_text() {
        let mut hidden = node("5", "button", "Hidden", &[], 50);
        hidden["ignored"] = json!(true);
        let mut check = node("6", "checkbox", "Remember me", &[], 60);
        check["properties"] =
            json!([{"name": "checked", "value": {"type": "tristate", "value": "true"}}]);
        let nodes = vec![
            node("1", "RootWebArea", "Sign in", &["2", "5", "6", "7"], 1),
            node("2", "generic", "", &["3"], 2),
            node("3", "button", "Log in", &["4"], 30),
            node("4", "StaticText", "Log in", &[], 31),
            hidden,
            check,
            node("7", "StaticText", "Forgot   password?", &[], 70),
        ];
        let pruned = prune(&nodes);
        let roles: Vec<(&str, &str, usize)> = pruned
            .iter()
            .map(|n| (n.role.as_str(), n.name.as_str(), n.depth))
            .collect();
        assert_eq!(
            roles,
            vec![
                ("button", "Log in", 0),
                ("checkbox", "Remember me", 0),
                ("text", "Forgot password?", 0)
            ]
        );
        assert_eq!(pruned[0].reference.as_deref(), Some("e30"));
        assert_eq!(pruned[1].states, vec!["checked"]);
        let text = render(&pruned, 2);
        assert!(
            text.starts_with(
                "- button \"Log in\" [ref=e30]\n- checkbox \"Remember me\" [checked] [ref=e60]\n"
            ),
            "{text}"
        );
        assert!(text.ends_with("… 2 more nodes\n"));
    }

    fn tree() -> Vec<SnapshotNode> {
        let at = |role: &str, name: &str, r: &str, depth: usize| SnapshotNode {
            depth,
            ..SnapshotNode::element(role, name, r)
        };
        vec![
            at("main", "", "e1", 0),
            at("form", "Login", "e2", 1),
            at("textbox", "User", "e3", 2),
            at("button", "Log in", "e4", 2),
            at("navigation", "", "e5", 0),
            at("link", "Help", "e6", 1),
        ]
    }

    fn args(json: Value) -> SnapshotArgs {
        serde_json::from_value(json).unwrap()
    }

    fn names(nodes: &[SnapshotNode]) -> Vec<(String, usize)> {
        nodes
            .iter()
            .map(|n| (format!("{} {}", n.role, n.name).trim().to_string(), n.depth))
            .collect()
    }

    #[test]
    fn ref_depth_and_find_cut_the_tree() {
        let View {
            nodes: sub,
            matches: _,
            removed: _,
        } = view(tree(), &args(json!({"ref": "e2"})), &[]).unwrap();
        assert_eq!(
            names(&sub),
            [
                ("form Login".into(), 0),
                ("textbox User".into(), 1),
                ("button Log in".into(), 1)
            ]
        );
        let View {
            nodes: top,
            matches: _,
            removed: _,
        } = view(tree(), &args(json!({"depth": 0})), &[]).unwrap();
        assert_eq!(names(&top), [("main".into(), 0), ("navigation".into(), 0)]);
        // A match comes with its path.
        let View {
            nodes: found,
            matches,
            removed: _,
        } = view(tree(), &args(json!({"find": "log in"})), &[]).unwrap();
        assert_eq!(matches, Some(1));
        assert_eq!(
            names(&found),
            [
                ("main".into(), 0),
                ("form Login".into(), 1),
                ("button Log in".into(), 2)
            ]
        );
        let View {
            nodes: found,
            matches,
            removed: _,
        } = view(tree(), &args(json!({"find": "/^(user|help)$/"})), &[]).unwrap();
        assert_eq!(matches, Some(2));
        assert_eq!(found.len(), 5, "{:?}", names(&found));
        let bad = view(tree(), &args(json!({"find": "/(/"})), &[]).unwrap_err();
        assert!(bad.message.starts_with("/find:"), "{bad:?}");
        let stale = view(tree(), &args(json!({"ref": "e99"})), &[]).unwrap_err();
        assert_eq!(stale.code.as_deref(), Some("stale_ref"));
    }

    #[test]
    fn changes_since_marks_new_and_changed_and_counts_removed() {
        let before = tree();
        let mut after = tree();
        after[2].value = Some("ada".into());
        after.remove(5);
        after.push(SnapshotNode {
            depth: 1,
            ..SnapshotNode::element("alert", "Saved", "e7")
        });
        let View {
            nodes: changed,
            matches: _,
            removed,
        } = view(after, &args(json!({"changes_since": true})), &before).unwrap();
        assert_eq!(removed, Some(1));
        let marked: Vec<(String, Vec<String>)> = changed
            .iter()
            .map(|n| (n.name.clone(), n.states.clone()))
            .collect();
        assert_eq!(
            marked,
            [
                ("".into(), vec![]),
                ("Login".into(), vec![]),
                ("User".into(), vec!["changed".into()]),
                ("".into(), vec![]),
                ("Saved".into(), vec!["new".into()]),
            ]
        );
    }
}
