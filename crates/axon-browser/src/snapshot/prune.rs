//! Chromium's accessibility tree, pruned: the walk that keeps elements,
//! structure and text, reaches into frames and clickable elements, gives
//! each element its states, and names fields by the text near them.

use std::collections::HashMap;

use serde_json::Value;

use super::labels::{self, Rect};
use super::*;

/// Chromium's roles for date and time inputs, and the role the snapshot
/// gives them (typed into as `yyyy-mm-dd`, `hh:mm`, `yyyy-mm-ddThh:mm`).
const FIELD_KINDS: [(&str, &str); 3] = [
    ("Date", "date"),
    ("InputTime", "time"),
    ("DateTime", "datetime"),
];

/// Roles kept for structure or reading.
const STRUCTURE: [&str; 20] = [
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
    "article",
    "image",
    "img",
];

/// Roles whose `checked` is shown both ways (`[checked]`, `[unchecked]`).
const CHECKS: [&str; 5] = [
    "checkbox",
    "radio",
    "switch",
    "menuitemcheckbox",
    "menuitemradio",
];

/// States reported, with the AX property that carries each.
const STATES: [&str; 7] = [
    "checked", "disabled", "expanded", "focused", "required", "selected", "pressed",
];

/// The pruned tree of a `getFullAXTree` node list, in document order.
#[cfg(test)]
pub(crate) fn prune(nodes: &[Value]) -> Vec<SnapshotNode> {
    prune_with(nodes, &Reach::default())
}

/// [`prune`], reaching into `reach`'s frames and keeping its clickable
/// elements; fields without a name are named by the text near them.
pub(crate) fn prune_with(nodes: &[Value], reach: &Reach) -> Vec<SnapshotNode> {
    let mut walker = Walker {
        reach,
        out: Vec::new(),
        boxes: Vec::new(),
    };
    walker.tree(nodes, 0, "");
    labels::name_fields(&mut walker.out, &walker.boxes);
    walker.out
}

/// Nodes of one accessibility tree, by id.
type ById<'a> = HashMap<&'a str, &'a Value>;

struct Walker<'r> {
    reach: &'r Reach,
    out: Vec<SnapshotNode>,
    /// Where each node of `out` is drawn, where known.
    boxes: Vec<Option<Rect>>,
}

impl Walker<'_> {
    /// Keep `node` (the DOM node `backend`): with its box, and a password
    /// field marked as one.
    fn push(&mut self, backend: Option<i64>, mut node: SnapshotNode) {
        if node.role == "textbox" && backend.is_some_and(|id| self.reach.passwords.contains(&id)) {
            node.states.push("password".into());
        }
        self.boxes
            .push(backend.and_then(|id| self.reach.boxes.get(&id).copied()));
        self.out.push(node);
    }

    /// Walk a whole tree (the page's, or a frame's) from its root.
    fn tree(&mut self, nodes: &[Value], depth: usize, carried: &str) {
        let by_id: ById = nodes
            .iter()
            .filter_map(|n| n["nodeId"].as_str().map(|id| (id, n)))
            .collect();
        if let Some(root) = nodes.first() {
            self.walk(root, &by_id, depth, carried);
        }
    }

    fn walk(&mut self, node: &Value, by_id: &ById, depth: usize, carried: &str) {
        let chromium = node["role"]["value"].as_str().unwrap_or_default();
        // Date and time fields: Chromium's own roles, and their insides
        // (spin buttons per segment, a picker button) are the browser's.
        let field_kind = FIELD_KINDS.iter().find(|(c, _)| *c == chromium);
        let role = field_kind.map_or(chromium, |(_, r)| *r);
        let mut name = collapse(node["name"]["value"].as_str().unwrap_or_default());
        let ignored = node["ignored"] == json!(true);
        let backend = node["backendDOMNodeId"].as_i64();
        // Built only for the nodes kept (not for every text run).
        let reference = || backend.map(|id| format!("e{id}"));
        let mut child_depth = depth;
        let mut child_carried = carried.to_string();
        let interactive = INTERACTIVE.contains(&role);
        // An element acting as a control that its role does not declare.
        let clickable = !interactive
            && role != "StaticText"
            && backend.is_some_and(|id| self.reach.clickable.contains(&id))
            && !has_interactive(node, by_id);
        if clickable {
            if name.is_empty() {
                name = text_of(node, by_id);
            }
            if !name.is_empty() {
                let shown = match role {
                    "" | "none" | "generic" | "paragraph" | "LabelText" => "generic",
                    other => other,
                };
                let mut kept = kept(reference(), shown, name.clone(), depth);
                kept.states = states(node, role);
                kept.states.push(CLICKABLE.into());
                self.push(backend, kept);
                child_depth = depth + 1;
                child_carried = name;
            }
        } else if role == "Iframe" {
            self.push(backend, kept(reference(), "iframe", name.clone(), depth));
            if let Some(frame) = backend.and_then(|id| self.reach.frames.get(&id)) {
                self.tree(frame, depth + 1, carried);
            }
            return;
        } else if !ignored {
            if role == "StaticText" {
                if !name.is_empty() && !carried.contains(&name) {
                    self.push(backend, kept(None, "text", name, depth));
                }
                // Its InlineTextBox children repeat it.
                return;
            }
            let keep = interactive
                || (STRUCTURE.contains(&role)
                    && (role != "image" && role != "img" || !name.is_empty()));
            if keep {
                let mut kept = kept(reference(), role, name.clone(), depth);
                kept.value = node["value"]["value"]
                    .as_str()
                    .filter(|v| !v.is_empty())
                    .map(str::to_string);
                kept.states = states(node, role);
                self.push(backend, kept);
                child_depth = depth + 1;
                if !name.is_empty() {
                    child_carried = name;
                }
                if field_kind.is_some() {
                    return;
                }
            }
        }
        for child in node["childIds"].as_array().into_iter().flatten() {
            if let Some(child) = child.as_str().and_then(|id| by_id.get(id)) {
                self.walk(child, by_id, child_depth, &child_carried);
            }
        }
    }
}

/// A node kept as `role` with `name`, no value and no states yet.
fn kept(reference: Option<String>, role: &str, name: String, depth: usize) -> SnapshotNode {
    SnapshotNode {
        reference,
        role: role.to_string(),
        name,
        depth,
        value: None,
        states: Vec::new(),
        name_from: None,
    }
}

/// How many nodes below an element are looked at for its text or for an
/// interactive descendant (a wrapper around half the page is not a control).
const SUBTREE_LOOK: usize = 200;

/// Whether an interactive element is below `node` (a clickable wrapper
/// around buttons or links is not itself the control: they are). A subtree
/// too big to look through counts as having one.
fn has_interactive(node: &Value, by_id: &ById) -> bool {
    let mut stack: Vec<&Value> = vec![node];
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > SUBTREE_LOOK {
            return true;
        }
        for child in n["childIds"].as_array().into_iter().flatten() {
            if let Some(c) = child.as_str().and_then(|id| by_id.get(id)) {
                let role = c["role"]["value"].as_str().unwrap_or_default();
                if (c["ignored"] != json!(true) && INTERACTIVE.contains(&role)) || role == "Iframe"
                {
                    return true;
                }
                stack.push(c);
            }
        }
    }
    false
}

/// The text below `node`, in order, at most 100 characters.
fn text_of(node: &Value, by_id: &ById) -> String {
    let mut parts = Vec::new();
    let mut stack: Vec<&Value> = vec![node];
    let mut seen = 0;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > SUBTREE_LOOK {
            break;
        }
        if n["role"]["value"] == "StaticText" {
            parts.push(n["name"]["value"].as_str().unwrap_or_default());
            continue;
        }
        let children: Vec<&Value> = n["childIds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str().and_then(|id| by_id.get(id)).copied())
            .collect();
        stack.extend(children.into_iter().rev());
    }
    let text = collapse(&parts.join(" "));
    match text.char_indices().nth(100) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
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
        } else if name == "multiline" && value == &Value::Bool(true) {
            out.push(name.to_string());
        } else if STATES.contains(&name) {
            let on = matches!(value, Value::Bool(true)) || value == "true";
            let off = matches!(value, Value::Bool(false)) || value == "false";
            match (name, on, off) {
                (_, true, _) => out.push(name.to_string()),
                (_, _, _) if value == "mixed" => out.push(format!("{name}=mixed")),
                // Both ways: a header that can open, a box that can be ticked.
                ("expanded", _, true) => out.push("collapsed".into()),
                ("checked", _, true) if CHECKS.contains(&role) => out.push("unchecked".into()),
                _ => {}
            }
        }
    }
    out
}
