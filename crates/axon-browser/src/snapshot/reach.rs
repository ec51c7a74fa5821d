//! What the snapshot reads beyond the main document's accessibility tree, in
//! one `DOMSnapshot.captureSnapshot` and one tree per iframe: elements that
//! act as controls without a role, password fields, where each node is drawn
//! (for labels read by position, `labels.rs`), and the iframes' documents.

use std::collections::{HashMap, HashSet};

use chromiumoxide::page::Page;
use serde_json::{Value, json};

use super::labels::Rect;
use crate::cdp;

/// What the snapshot reads beyond the main document's accessibility tree.
#[derive(Debug, Default)]
pub(crate) struct Reach {
    /// Backend node ids of elements that act as controls without a role.
    pub clickable: HashSet<i64>,
    /// Backend node ids of `<input type="password">` fields (the
    /// accessibility tree calls them text boxes).
    pub passwords: HashSet<i64>,
    /// Where each rendered node (element or text) is drawn, by backend id.
    pub boxes: HashMap<i64, Rect>,
    /// The accessibility tree of each iframe's document, by the backend node
    /// id of its `<iframe>` element.
    pub frames: HashMap<i64, Vec<Value>>,
}

/// Read [`Reach`] for `page`: one DOM snapshot (listeners, cursors,
/// tabindex, input types, layout boxes) and one accessibility tree per
/// iframe. A frame or a DOM snapshot that cannot be read (it navigated
/// meanwhile) is left out, not an error.
pub(crate) async fn reach(page: &Page) -> Reach {
    let capture = cdp::send(
        page,
        "DOMSnapshot.captureSnapshot",
        json!({"computedStyles": ["cursor"]}),
    );
    let frames = frame_trees(page);
    let (capture, frames) = tokio::join!(capture, frames);
    let mut reach = capture.map(|c| read_capture(&c)).unwrap_or_default();
    reach.frames = frames;
    reach
}

/// Every iframe's accessibility tree, by its owner element's backend id.
async fn frame_trees(page: &Page) -> HashMap<i64, Vec<Value>> {
    let mut out = HashMap::new();
    let Ok(tree) = cdp::send(page, "Page.getFrameTree", json!({})).await else {
        return out;
    };
    let mut ids = Vec::new();
    let mut stack: Vec<&Value> = tree["frameTree"]["childFrames"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    while let Some(frame) = stack.pop() {
        if let Some(id) = frame["frame"]["id"].as_str() {
            ids.push(id.to_string());
        }
        stack.extend(frame["childFrames"].as_array().into_iter().flatten());
    }
    for id in ids {
        let owner = cdp::send(page, "DOM.getFrameOwner", json!({"frameId": id})).await;
        let Some(owner) = owner.ok().and_then(|o| o["backendNodeId"].as_i64()) else {
            continue;
        };
        let frame_tree =
            cdp::send(page, "Accessibility.getFullAXTree", json!({"frameId": id})).await;
        if let Some(nodes) = frame_tree.ok().and_then(|t| t["nodes"].as_array().cloned()) {
            out.insert(owner, nodes);
        }
    }
    out
}

/// One document of a capture, with its string table.
struct Doc<'a> {
    strings: &'a [&'a str],
    doc: &'a Value,
}

impl Doc<'_> {
    fn string(&self, v: &Value) -> &str {
        v.as_i64()
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.strings.get(i).copied())
            .unwrap_or_default()
    }

    fn attribute(&self, attrs: &[i64], name: &str) -> Option<&str> {
        attrs
            .chunks(2)
            .find(|pair| pair.len() == 2 && self.string(&Value::from(pair[0])) == name)
            .map(|pair| self.string(&Value::from(pair[1])))
    }
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_i64().unwrap_or(-1)).collect())
        .unwrap_or_default()
}

/// The facts of a `DOMSnapshot.captureSnapshot` with the `cursor` style
/// (everything but the frames).
pub(crate) fn read_capture(capture: &Value) -> Reach {
    let strings: Vec<&str> = capture["strings"]
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap_or_default()).collect())
        .unwrap_or_default();
    let mut reach = Reach::default();
    for doc in capture["documents"].as_array().into_iter().flatten() {
        let doc = Doc {
            strings: &strings,
            doc,
        };
        read_document(&doc, &mut reach);
    }
    reach
}

/// Elements that act as controls: rendered elements with a click listener
/// (or an `onclick`), a `tabindex` of 0 or more, or `cursor: pointer` where
/// their parent's cursor is not (the outermost element of a pointer area).
/// The document and `<html>`/`<body>` are not (a listener there is
/// delegation), nor a `<label>` (its click goes to its field). Also the
/// password fields and every rendered node's box.
fn read_document(d: &Doc, reach: &mut Reach) {
    let nodes = &d.doc["nodes"];
    let parents = ints(&nodes["parentIndex"]);
    let types = ints(&nodes["nodeType"]);
    let backend = ints(&nodes["backendNodeId"]);
    let none = Vec::new();
    let names = nodes["nodeName"].as_array().unwrap_or(&none);
    let attributes = nodes["attributes"].as_array().unwrap_or(&none);
    let listened: HashSet<i64> = ints(&nodes["isClickable"]["index"]).into_iter().collect();
    let pseudo: HashSet<i64> = ints(&nodes["pseudoType"]["index"]).into_iter().collect();
    // The cursor and box of each rendered node (its first layout box).
    let mut cursor: HashMap<i64, &str> = HashMap::new();
    let layout = &d.doc["layout"];
    let styles = layout["styles"].as_array().unwrap_or(&none);
    let bounds = layout["bounds"].as_array().unwrap_or(&none);
    for (k, node) in ints(&layout["nodeIndex"]).into_iter().enumerate() {
        let value = styles.get(k).and_then(|s| s.get(0)).map(|v| d.string(v));
        cursor.entry(node).or_insert(value.unwrap_or_default());
        let id = usize::try_from(node).ok().and_then(|i| backend.get(i));
        if let (Some(&id), Some(rect)) = (id, bounds.get(k).and_then(rect_of)) {
            reach.boxes.entry(id).or_insert(rect);
        }
    }
    for (i, &kind) in types.iter().enumerate() {
        let index = i as i64;
        if kind != 1 || pseudo.contains(&index) {
            continue;
        }
        let Some(&own) = cursor.get(&index) else {
            continue; // not rendered
        };
        let name = names.get(i).map(|v| d.string(v)).unwrap_or_default();
        let attrs = attributes.get(i).map(ints).unwrap_or_default();
        let Some(&id) = backend.get(i) else {
            continue;
        };
        if name == "INPUT"
            && d.attribute(&attrs, "type")
                .is_some_and(|t| t.eq_ignore_ascii_case("password"))
        {
            reach.passwords.insert(id);
        }
        // A label's click goes to its field, which is listed already.
        if matches!(name, "HTML" | "BODY" | "IFRAME" | "LABEL") {
            continue;
        }
        let parent = parents.get(i).copied().unwrap_or(-1);
        let pointer = own == "pointer" && cursor.get(&parent).copied() != Some("pointer");
        let tabbable = d
            .attribute(&attrs, "tabindex")
            .is_some_and(|t| t.trim().parse::<i64>().is_ok_and(|t| t >= 0));
        if pointer || tabbable || listened.contains(&index) {
            reach.clickable.insert(id);
        }
    }
}

fn rect_of(v: &Value) -> Option<Rect> {
    let b = v.as_array()?;
    let n = |i: usize| b.get(i).and_then(Value::as_f64);
    Some(Rect {
        x: n(0)?,
        y: n(1)?,
        w: n(2)?,
        h: n(3)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clickables_are_listeners_tabindex_and_the_outermost_pointer() {
        // Strings: 0 "HTML", 1 "BODY", 2 "DIV", 3 "SPAN", 4 "pointer", 5 "auto",
        // 6 "tabindex", 7 "0", 8 "LI", 9 "-1".
        let capture = json!({
            "strings": ["HTML", "BODY", "DIV", "SPAN", "pointer", "auto", "tabindex", "0", "LI", "-1"],
            "documents": [{
                "nodes": {
                    "parentIndex": [-1, 0, 1, 2, 1, 1, 1, 1],
                    "nodeType": [1, 1, 1, 1, 1, 1, 1, 1],
                    "nodeName": [0, 1, 2, 3, 8, 2, 2, 3],
                    "backendNodeId": [10, 11, 12, 13, 14, 15, 16, 17],
                    "attributes": [[], [], [], [], [], [6, 7], [6, 9], []],
                    "isClickable": {"index": [1, 4]},
                    "pseudoType": {"index": [], "value": []},
                },
                // Node 7 is not rendered (no layout box).
                "layout": {
                    "nodeIndex": [0, 1, 2, 3, 4, 5, 6],
                    "styles": [[5], [5], [4], [4], [5], [5], [5]],
                },
            }],
        });
        let found = read_capture(&capture).clickable;
        // The pointer div (not its span, which inherits the cursor), the
        // listener on the li, tabindex=0; not the body's delegated listener,
        // tabindex=-1, or an element with no box.
        let mut ids: Vec<i64> = found.into_iter().collect();
        ids.sort();
        assert_eq!(ids, vec![12, 14, 15]);
    }
}
