//! Names for fields the page does not name, read the way a person reads a
//! form: the text left of the field on its row, or just above it (a checkbox
//! or radio: the text right of it), with nothing between. A sentence ("Focus
//! into the 3rd textbox.") is an instruction, not a label, and text inside a
//! control (another field's value) labels nothing. Where the page's layout is
//! unknown (a node without a box), the text just before the field in
//! document order (a checkbox or radio: just after) names it.

use super::{NEARBY_TEXT, SnapshotNode};

/// A rendered box, in CSS pixels of its document.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    fn right(&self) -> f64 {
        self.x + self.w
    }

    fn bottom(&self) -> f64 {
        self.y + self.h
    }

    /// How much of their heights two boxes share.
    fn rows_overlap(&self, other: &Rect) -> f64 {
        (self.bottom().min(other.bottom()) - self.y.max(other.y)).max(0.0)
    }

    fn columns_overlap(&self, other: &Rect) -> bool {
        self.x < other.right() && other.x < self.right()
    }

    fn contains(&self, other: &Rect) -> bool {
        other.x >= self.x - 1.0
            && other.y >= self.y - 1.0
            && other.right() <= self.right() + 1.0
            && other.bottom() <= self.bottom() + 1.0
    }
}

/// Roles named by the text left of or above them when the page gives them
/// no name.
const NAMED_BEFORE: [&str; 10] = [
    "textbox",
    "searchbox",
    "combobox",
    "spinbutton",
    "listbox",
    "slider",
    "textarea",
    "date",
    "time",
    "datetime",
];

/// Roles named by the text right of them (after them in document order).
const NAMED_AFTER: [&str; 3] = ["checkbox", "radio", "switch"];

/// How far a label may sit from its field, in CSS pixels.
const ROW_GAP: f64 = 300.0;

/// Give each unnamed field a name from the text around it. `boxes` is
/// parallel to `nodes`: each node's rendered box, where known.
pub(crate) fn name_fields(nodes: &mut [SnapshotNode], boxes: &[Option<Rect>]) {
    for i in 0..nodes.len() {
        let n = &nodes[i];
        if !n.name.is_empty() || n.reference.is_none() {
            continue;
        }
        let role = n.role.as_str();
        let after = NAMED_AFTER.contains(&role);
        if !after && !NAMED_BEFORE.contains(&role) {
            continue;
        }
        let label = match boxes.get(i).copied().flatten() {
            Some(field) => by_layout(nodes, boxes, i, field, after),
            None => by_order(nodes, i, after),
        };
        if let Some(label) = label {
            nodes[i].name = label;
            nodes[i].name_from = Some(NEARBY_TEXT.into());
        }
    }
}

/// Text that can be a label: short, not a sentence.
fn label_text(n: &SnapshotNode) -> Option<String> {
    if n.role != "text" || n.reference.is_some() {
        return None;
    }
    let text = n.name.trim().trim_end_matches([':', '*', ' ']).trim();
    let words = text.split_whitespace().count();
    let sentence = text.ends_with(['.', '!', '?']) && words >= 3;
    (!text.is_empty() && text.chars().count() <= 60 && !sentence).then(|| text.to_string())
}

/// The label by position: the nearest text left on the field's row (right of
/// it, for a checkbox), else the nearest just above it, with no control in
/// between and not inside a control.
fn by_layout(
    nodes: &[SnapshotNode],
    boxes: &[Option<Rect>],
    field: usize,
    at: Rect,
    after: bool,
) -> Option<String> {
    let controls: Vec<Rect> = nodes
        .iter()
        .zip(boxes)
        .enumerate()
        .filter(|(j, (n, _))| *j != field && n.actionable())
        .filter_map(|(_, (_, b))| *b)
        .collect();
    let mut beside: Option<(f64, String)> = None;
    let mut above: Option<(f64, String)> = None;
    for (n, b) in nodes.iter().zip(boxes) {
        let (Some(text), Some(tb)) = (label_text(n), *b) else {
            continue;
        };
        if tb.w <= 0.0 || controls.iter().any(|c| c.contains(&tb)) {
            continue;
        }
        let same_row = tb.rows_overlap(&at) >= 0.5 * tb.h.min(at.h);
        let gap = if after {
            tb.x - at.right()
        } else {
            at.x - tb.right()
        };
        if same_row && (-2.0..=ROW_GAP).contains(&gap) {
            let (from, to) = if after {
                (at.right(), tb.x)
            } else {
                (tb.right(), at.x)
            };
            let between = controls
                .iter()
                .any(|c| c.rows_overlap(&at) > 0.0 && c.x >= from - 1.0 && c.right() <= to + 1.0);
            if !between && beside.as_ref().is_none_or(|(g, _)| gap < *g) {
                beside = Some((gap, text));
            }
            continue;
        }
        let rise = at.y - tb.bottom();
        let aligned = tb.columns_overlap(&at) && tb.x >= at.x - 20.0;
        if !after && aligned && (-2.0..=at.h.max(20.0) * 2.0).contains(&rise) {
            let between = controls.iter().any(|c| {
                c.columns_overlap(&at) && c.y >= tb.bottom() - 1.0 && c.bottom() <= at.y + 1.0
            });
            if !between && above.as_ref().is_none_or(|(r, _)| rise < *r) {
                above = Some((rise, text));
            }
        }
    }
    beside.or(above).map(|(_, text)| text)
}

/// The label by document order: the text just before the field (a checkbox:
/// just after), looking past unnamed structure but not past another control
/// or a heading (which titles a section, not a field).
fn by_order(nodes: &[SnapshotNode], i: usize, after: bool) -> Option<String> {
    let range: Vec<usize> = if after {
        (i + 1..nodes.len().min(i + 3)).collect()
    } else {
        (i.saturating_sub(4)..i).rev().collect()
    };
    for j in range {
        let other = &nodes[j];
        if other.actionable() || other.role == "iframe" || other.role == "heading" {
            return None;
        }
        if !other.name.is_empty() {
            return label_text(other);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(name: &str) -> SnapshotNode {
        SnapshotNode {
            reference: None,
            role: "text".into(),
            name: name.into(),
            depth: 0,
            value: None,
            states: Vec::new(),
            name_from: None,
        }
    }

    fn field(r: &str) -> SnapshotNode {
        SnapshotNode::element("textbox", "", r)
    }

    fn at(x: f64, y: f64, w: f64, h: f64) -> Option<Rect> {
        Some(Rect { x, y, w, h })
    }

    #[test]
    fn unnamed_fields_take_the_text_next_to_them() {
        let text = |name: &str| SnapshotNode {
            reference: None,
            role: "text".into(),
            name: name.into(),
            depth: 0,
            value: None,
            states: Vec::new(),
            name_from: None,
        };
        let mut nodes = vec![
            text("Password:"),
            SnapshotNode::element("textbox", "", "e1"),
            SnapshotNode::element("button", "Go", "e2"),
            SnapshotNode::element("textbox", "", "e3"),
            SnapshotNode::element("checkbox", "", "e4"),
            text("I agree"),
            SnapshotNode::element("textbox", "Named", "e5"),
        ];
        name_fields(&mut nodes, &[None; 7]);
        assert_eq!(nodes[1].name, "Password");
        assert_eq!(nodes[1].name_from.as_deref(), Some(NEARBY_TEXT));
        // A control between the text and the field: no name taken across it.
        assert_eq!(nodes[3].name, "");
        assert_eq!(nodes[4].name, "I agree");
        assert_eq!(nodes[6].name_from, None);
        assert!(
            nodes[1]
                .line()
                .contains("textbox \"Password\" (by nearby text) [ref=e1]")
        );
    }

    #[test]
    fn a_sentence_above_a_form_is_not_its_first_fields_label() {
        let mut nodes = vec![
            text("Focus into the 3rd input textbox."),
            field("e1"),
            field("e2"),
        ];
        name_fields(&mut nodes, &[None; 3]);
        assert_eq!(nodes[1].name, "");
        let boxes = [
            at(8.0, 8.0, 300.0, 18.0),
            at(8.0, 30.0, 150.0, 20.0),
            at(8.0, 56.0, 150.0, 20.0),
        ];
        name_fields(&mut nodes, &boxes);
        assert_eq!((nodes[1].name.as_str(), nodes[2].name.as_str()), ("", ""));
    }

    #[test]
    fn labels_are_read_by_position_not_source_order() {
        // Source order: field, its label (drawn left of it); field, label.
        let mut nodes = vec![
            field("e1"),
            text("First name *"),
            field("e2"),
            text("Last name"),
        ];
        let boxes = [
            at(140.0, 10.0, 150.0, 20.0),
            at(10.0, 12.0, 80.0, 16.0),
            at(140.0, 40.0, 150.0, 20.0),
            at(10.0, 42.0, 70.0, 16.0),
        ];
        name_fields(&mut nodes, &boxes);
        assert_eq!(nodes[0].name, "First name");
        assert_eq!(nodes[2].name, "Last name");
        // A caption above each field in a box of its own; two boxes side by side.
        let mut nodes = vec![text("Street"), field("e1"), text("City"), field("e2")];
        let boxes = [
            at(10.0, 10.0, 40.0, 14.0),
            at(10.0, 26.0, 190.0, 20.0),
            at(220.0, 10.0, 30.0, 14.0),
            at(220.0, 26.0, 190.0, 20.0),
        ];
        name_fields(&mut nodes, &boxes);
        assert_eq!(
            (nodes[1].name.as_str(), nodes[3].name.as_str()),
            ("Street", "City")
        );
    }

    #[test]
    fn text_inside_a_control_or_behind_one_labels_nothing() {
        // The first field's value drawn inside it; the second field right of it.
        let mut first = SnapshotNode::element("textbox", "Name", "e1");
        first.value = Some("Ada".into());
        let mut nodes = vec![first, text("Ada"), field("e2")];
        let boxes = [
            at(10.0, 10.0, 150.0, 20.0),
            at(12.0, 12.0, 30.0, 16.0),
            at(170.0, 10.0, 150.0, 20.0),
        ];
        name_fields(&mut nodes, &boxes);
        assert_eq!(nodes[2].name, "");
    }
}
