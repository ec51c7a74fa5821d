//! The plain browser call a `browser_act` step made, the element by role and
//! name: what a plan replays without a translator.

use serde_json::Value;

use super::dispatch::scroll_args;
use super::{Action, ActionArgs, ActionKind, ReplayCall};
use axon_browser::SnapshotNode;
use axon_browser::{Direction, Edge};

/// The browser tool call that does what `action` does, as [`run`] makes it,
/// with the element by role and name where the snapshot has them.
pub(super) fn replay(action: &Action, nodes: &[SnapshotNode]) -> ReplayCall {
    let a = &action.args;
    let mut args = serde_json::Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            args.insert(key.to_string(), v);
        }
    };
    let text = |v: &Option<String>| v.clone().map(Value::from);
    let target = stable_address(a, nodes);
    let tool = match action.action {
        ActionKind::Navigate => {
            put("url", text(&a.url));
            "browser_navigate"
        }
        ActionKind::Click => {
            target.into_iter().for_each(|(k, v)| put(k, Some(v)));
            "browser_click"
        }
        ActionKind::Type => {
            let named = a.reference.is_some() || a.role.is_some();
            put("text", text(&a.text));
            if named {
                target.into_iter().for_each(|(k, v)| put(k, Some(v)));
                put("clear", Some(Value::Bool(true)));
            }
            if a.key.as_deref() == Some("Enter") {
                put("submit", Some(Value::Bool(true)));
            }
            "browser_type"
        }
        ActionKind::Search => {
            put("query", text(&a.text));
            "browser_search"
        }
        ActionKind::Scroll => {
            let s = scroll_args(a);
            let to = s.to.map(|e| if e == Edge::Top { "top" } else { "bottom" });
            let direction = s
                .direction
                .map(|d| if d == Direction::Up { "up" } else { "down" });
            put("to", to.map(Value::from));
            put("direction", direction.map(Value::from));
            "browser_scroll"
        }
        ActionKind::PressKey => {
            put("key", text(&a.key));
            "browser_press_key"
        }
        ActionKind::Wait => {
            put("seconds", a.seconds.map(Value::from));
            "browser_wait"
        }
        ActionKind::Select => {
            target.into_iter().for_each(|(k, v)| put(k, Some(v)));
            let many = a.values.clone().filter(|v| !v.is_empty()).map(Value::from);
            put("values", many.or_else(|| text(&a.text)));
            "browser_select_option"
        }
        ActionKind::Hover => {
            target.into_iter().for_each(|(k, v)| put(k, Some(v)));
            "browser_hover"
        }
        ActionKind::Drag => {
            put("source", Some(object(target)));
            put("target", Some(drop_target(a, nodes)));
            "browser_drag"
        }
        ActionKind::Upload => {
            match (&a.reference, &a.role, &a.name) {
                (None, None, Some(label)) => put("label", Some(Value::from(label.clone()))),
                (None, None, None) => put("selector", Some(Value::from("input[type=file]"))),
                _ => target.into_iter().for_each(|(k, v)| put(k, Some(v))),
            }
            let many = a.values.clone().filter(|v| !v.is_empty());
            let paths = many.or_else(|| a.text.clone().map(|t| vec![t]));
            put("paths", paths.map(Value::from));
            "browser_upload_file"
        }
        ActionKind::GoBack => "browser_navigate_back",
        ActionKind::GoForward => "browser_navigate_forward",
        ActionKind::HandleDialog => {
            put("accept", a.accept.map(Value::from));
            put("prompt_text", text(&a.text));
            "browser_handle_dialog"
        }
        ActionKind::SelectTab | ActionKind::CloseTab => {
            let verb = match action.action {
                ActionKind::SelectTab => "select",
                _ => "close",
            };
            put("action", Some(Value::from(verb)));
            put("index", a.index.map(Value::from));
            "browser_tabs"
        }
    };
    ReplayCall {
        tool: tool.to_string(),
        args: Value::Object(args),
    }
}

/// An address's pairs as a JSON object.
fn object(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Where a drag drops, as an address: a ref of the snapshot (by its stable
/// role and name), or the text to drop onto.
fn drop_target(a: &ActionArgs, nodes: &[SnapshotNode]) -> Value {
    let known = |r: &String| nodes.iter().any(|n| n.reference.as_ref() == Some(r));
    let onto = match a.onto.clone() {
        Some(r) if known(&r) => ActionArgs {
            reference: Some(r),
            ..ActionArgs::default()
        },
        text => ActionArgs {
            name: text,
            ..ActionArgs::default()
        },
    };
    object(stable_address(&onto, nodes))
}

/// An element as role and name (from the snapshot node a ref points at, when
/// the action gave a ref), or its ref when it has no name to go by.
fn stable_address(a: &ActionArgs, nodes: &[SnapshotNode]) -> Vec<(&'static str, Value)> {
    let node = a
        .reference
        .as_ref()
        .and_then(|r| nodes.iter().find(|n| n.reference.as_ref() == Some(r)));
    match (node, &a.role, &a.name) {
        // A name the page does not give as an accessible name: by the text
        // it was found by.
        (Some(n), _, _) if n.name_from.is_some() && !n.name.trim().is_empty() => vec![
            ("label", Value::from(n.name.clone())),
            ("exact", Value::Bool(true)),
        ],
        // Roles of the snapshot's own that a role locator does not know.
        (Some(n), _, _)
            if matches!(n.role.as_str(), "date" | "time" | "datetime")
                && !n.name.trim().is_empty() =>
        {
            vec![
                ("label", Value::from(n.name.clone())),
                ("exact", Value::Bool(true)),
            ]
        }
        (Some(n), _, _)
            if (n.is_clickable() || n.role == "DisclosureTriangle")
                && !n.name.trim().is_empty() =>
        {
            vec![
                ("has_text", Value::from(n.name.clone())),
                ("exact", Value::Bool(true)),
            ]
        }
        (Some(n), _, _) if !n.name.trim().is_empty() => vec![
            ("role", Value::from(n.role.clone())),
            ("name", Value::from(n.name.clone())),
            ("exact", Value::Bool(true)),
        ],
        // An element named by the text inside it (a list item, a menu's
        // label): by that text.
        (_, _, Some(name))
            if !name.trim().is_empty()
                && node.is_none_or(|n| n.name.trim().is_empty())
                && (node.is_some() || a.role.is_none()) =>
        {
            vec![("has_text", Value::from(name.clone()))]
        }
        (Some(_), _, _) | (None, None, _) | (None, _, None) => a
            .reference
            .clone()
            .map(|r| vec![("ref", Value::from(r))])
            .unwrap_or_default(),
        (None, Some(role), Some(name)) => vec![
            ("role", Value::from(role.clone())),
            ("name", Value::from(name.clone())),
        ],
    }
}
