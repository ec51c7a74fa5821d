//! `browser_snapshot`: Chromium's accessibility tree, pruned to what an agent
//! needs to pick its next action.
//!
//! Kept: interactive elements (buttons, links, fields, options, …), headings,
//! landmarks, table structure, images with a name, and text not already
//! carried by an element's name. Dropped: ignored (hidden) nodes and generic
//! wrappers, whose children move up. Every element gets a `ref` (`e` + its
//! backend node id, stable while the document lives) that the element tools
//! take as an address.

use std::collections::HashMap;

use axon_core::ToolError;
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::cdp::{self, Evaluated};

/// `browser_snapshot` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotArgs {
    /// At most this many nodes (the rest are counted in `truncated`).
    #[serde(default = "default_max_nodes")]
    pub max_nodes: usize,
    /// Also return the nodes as a list (the text carries the same).
    #[serde(default)]
    pub nodes: bool,
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
    /// selected, and `level=N` for headings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<String>,
}

#[cfg(test)]
impl SnapshotNode {
    /// An element with a ref, for unit tests.
    pub(crate) fn element(role: &str, name: &str, reference: &str) -> Self {
        SnapshotNode {
            reference: Some(reference.into()),
            role: role.into(),
            name: name.into(),
            depth: 0,
            value: None,
            states: Vec::new(),
        }
    }
}

/// The page's pruned accessibility tree.
#[derive(Debug, Serialize, JsonSchema)]
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
pub(crate) const INTERACTIVE: [&str; 18] = [
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
];

/// Roles kept for structure or reading.
const STRUCTURE: [&str; 19] = [
    "heading",
    "main",
    "navigation",
    "form",
    "search",
    "banner",
    "contentinfo",
    "dialog",
    "alert",
    "alertdialog",
    "table",
    "row",
    "cell",
    "columnheader",
    "rowheader",
    "list",
    "listitem",
    "image",
    "img",
];

/// States reported, with the AX property that carries each.
const STATES: [&str; 7] = [
    "checked", "disabled", "expanded", "focused", "required", "selected", "pressed",
];

pub(crate) async fn snapshot(page: &Page, max_nodes: usize) -> Result<Snapshot, ToolError> {
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
    let mut all = prune(&nodes);
    let truncated = all.len().saturating_sub(max_nodes);
    all.truncate(max_nodes);
    let text = render(&all, truncated);
    Ok(Snapshot {
        url,
        title,
        nodes: all,
        text,
        truncated,
    })
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

/// The pruned tree of a `getFullAXTree` node list, in document order.
pub(crate) fn prune(nodes: &[Value]) -> Vec<SnapshotNode> {
    let by_id: HashMap<&str, &Value> = nodes
        .iter()
        .filter_map(|n| n["nodeId"].as_str().map(|id| (id, n)))
        .collect();
    let mut out = Vec::new();
    if let Some(root) = nodes.first() {
        walk(root, &by_id, 0, "", &mut out);
    }
    out
}

fn walk(
    node: &Value,
    by_id: &HashMap<&str, &Value>,
    depth: usize,
    carried: &str,
    out: &mut Vec<SnapshotNode>,
) {
    let role = node["role"]["value"].as_str().unwrap_or_default();
    let name = collapse(node["name"]["value"].as_str().unwrap_or_default());
    let ignored = node["ignored"] == json!(true);
    let mut child_depth = depth;
    let mut child_carried = carried.to_string();
    if !ignored {
        if role == "StaticText" {
            if !name.is_empty() && !carried.contains(&name) {
                out.push(SnapshotNode {
                    reference: None,
                    role: "text".into(),
                    name,
                    depth,
                    value: None,
                    states: Vec::new(),
                });
            }
            // Its InlineTextBox children repeat it.
            return;
        }
        let interactive = INTERACTIVE.contains(&role);
        let keep = interactive
            || (STRUCTURE.contains(&role)
                && (role != "image" && role != "img" || !name.is_empty()));
        if keep {
            out.push(SnapshotNode {
                reference: node["backendDOMNodeId"].as_i64().map(|id| format!("e{id}")),
                role: role.to_string(),
                name: name.clone(),
                depth,
                value: node["value"]["value"]
                    .as_str()
                    .filter(|v| !v.is_empty())
                    .map(str::to_string),
                states: states(node, role),
            });
            child_depth = depth + 1;
            if !name.is_empty() {
                child_carried = name;
            }
        }
    }
    for child in node["childIds"].as_array().into_iter().flatten() {
        if let Some(child) = child.as_str().and_then(|id| by_id.get(id)) {
            walk(child, by_id, child_depth, &child_carried, out);
        }
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn states(node: &Value, role: &str) -> Vec<String> {
    let mut out = Vec::new();
    for prop in node["properties"].as_array().into_iter().flatten() {
        let name = prop["name"].as_str().unwrap_or_default();
        let value = &prop["value"]["value"];
        if name == "level" && role == "heading" {
            out.push(format!("level={value}"));
        } else if STATES.contains(&name) {
            match value {
                Value::Bool(true) => out.push(name.to_string()),
                Value::String(s) if s == "true" => out.push(name.to_string()),
                Value::String(s) if s == "mixed" => out.push(format!("{name}=mixed")),
                _ => {}
            }
        }
    }
    out
}

fn render(nodes: &[SnapshotNode], truncated: usize) -> String {
    let mut text = String::new();
    for n in nodes {
        text.push_str(&"  ".repeat(n.depth));
        text.push_str("- ");
        text.push_str(&n.role);
        if !n.name.is_empty() {
            text.push_str(&format!(" {:?}", n.name));
        }
        if let Some(value) = &n.value {
            text.push_str(&format!(" value={value:?}"));
        }
        for state in &n.states {
            text.push_str(&format!(" [{state}]"));
        }
        if let Some(r) = &n.reference {
            text.push_str(&format!(" [ref={r}]"));
        }
        text.push('\n');
    }
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
}
