//! Steps that point rather than click: hovering ("Hover over the Products
//! menu"), dragging ("Drag Item 3 above Item 1", "Move Card A to Done") and
//! uploading ("Upload report.pdf to the Resume field").
//!
//! A hover or drag target is whatever the page shows under that name: a
//! control, or a piece of text (a menu's label, a list item's words) that a
//! person points at. Text is addressed by the text itself; a drop target by
//! the element holding its words.

use axon_core::ToolError;

use super::{NOT_FOUND, TIE, decision, fail, find_words, norm, quoted, similarity, unquoted};
use crate::{Action, ActionArgs, ActionKind, Decision};
use axon_browser::SnapshotNode;

/// Phrases that mean "move the pointer over", longest first.
const HOVER: [&str; 10] = [
    "move the mouse pointer over",
    "move the mouse over",
    "move the pointer over",
    "move the mouse to",
    "mouse over",
    "mouseover",
    "hover over",
    "hover on",
    "hover",
    "point at",
];

/// Words between a drag's source and its target, longest first.
const DROP_WORDS: [&str; 12] = [
    "on top of",
    "in front of",
    "onto",
    "into",
    "above",
    "below",
    "before",
    "after",
    "over",
    "under",
    "to",
    "on",
];

/// Words that are no part of a name here.
const FILLER: [&str; 10] = [
    "the", "a", "an", "element", "menu", "please", "then", "it", "position", "drop",
];

/// Where the step's hover phrase ends, if it has one.
pub(super) fn hover_at(lower: &str) -> Option<usize> {
    HOVER
        .iter()
        .find_map(|p| find_words(lower, p).map(|at| at + p.len()))
}

/// Whether the step asks to drag ("drag", or "move X above/onto Y").
pub(super) fn drags(lower: &str) -> bool {
    find_words(lower, "drag").is_some()
        || (find_words(lower, "move").is_some()
            && [
                "above",
                "below",
                "onto",
                "before",
                "after",
                "on top of",
                "into",
            ]
            .iter()
            .any(|w| find_words(lower, w).is_some()))
}

/// Whether the step asks to upload or attach a file.
pub(super) fn uploads(lower: &str) -> bool {
    ["upload", "attach", "choose file", "select file"]
        .iter()
        .any(|w| find_words(lower, w).is_some())
}

/// What a name phrase points at: the element (`reference`, `role`) and the
/// name to give it; text without a ref of its own keeps only its words.
struct Pointed<'a> {
    node: &'a SnapshotNode,
    /// The element holding it (itself when it has a ref).
    holder: Option<&'a SnapshotNode>,
    score: f64,
}

/// The name's words, fillers out.
fn name_words(phrase: &str) -> String {
    norm(phrase)
        .split_whitespace()
        .filter(|w| !FILLER.contains(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The node the page shows as `phrase`: a named element or a text, best
/// first; `element_not_found` below the bar, `ambiguous_step` on a tie.
fn pointed<'a>(nodes: &'a [SnapshotNode], phrase: &str) -> Result<Pointed<'a>, ToolError> {
    let target = name_words(phrase);
    if target.is_empty() {
        return Err(fail("ambiguous_step", "point at what? name the element"));
    }
    let mut scored: Vec<(usize, f64)> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.name.trim().is_empty() && (n.reference.is_some() || n.role == "text"))
        .map(|(i, n)| (i, similarity(&target, &n.name)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let Some(&(top, score)) = scored.first() else {
        return Err(fail(
            "element_not_found",
            "the page shows nothing to point at",
        ));
    };
    if score < NOT_FOUND {
        return Err(fail(
            "element_not_found",
            format!(
                "nothing on the page matches {target:?} (closest: {:?})",
                nodes[top].name
            ),
        ));
    }
    // A control and the text right inside it are the same thing.
    if let Some(&(second, other)) = scored
        .iter()
        .skip(1)
        .find(|(i, _)| nodes[*i].name != nodes[top].name)
        && other >= score - TIE
    {
        return Err(fail(
            "ambiguous_step",
            format!(
                "{target:?} fits both {:?} and {:?}; say which",
                nodes[top].name, nodes[second].name
            ),
        ));
    }
    let node = &nodes[top];
    let holder = match node.reference {
        Some(_) => Some(node),
        // The nearest element before it that is shallower: what holds it.
        None => nodes[..top]
            .iter()
            .rev()
            .find(|n| n.depth < node.depth && n.reference.is_some()),
    };
    Ok(Pointed {
        node,
        holder,
        score,
    })
}

/// The action's element: by ref and name for an element, by its words for
/// text (which the locator finds by its text).
fn element_args(p: &Pointed<'_>) -> ActionArgs {
    match p.node.reference {
        Some(_) => ActionArgs {
            role: Some(p.node.role.clone()),
            name: Some(p.node.name.clone()),
            reference: p.node.reference.clone(),
            ..ActionArgs::default()
        },
        None => ActionArgs {
            name: Some(p.node.name.clone()),
            ..ActionArgs::default()
        },
    }
}

/// "Hover over the Products menu" (`from` is where the hover phrase ends).
pub(super) fn hover(
    nodes: &[SnapshotNode],
    step: &str,
    from: usize,
) -> Result<Decision, ToolError> {
    let lower = step.to_lowercase();
    let rest = lower.get(from..).unwrap_or_default();
    let quotes = quoted(step);
    let phrase = quotes.first().cloned().unwrap_or_else(|| rest.to_string());
    let p = match pointed(nodes, &phrase) {
        Ok(p) => p,
        // Text the page shows but the translator's view left out (a menu's
        // label with nothing interactive near it): by the step's own words,
        // which the locator finds or fails on.
        Err(e) if e.code.as_deref() == Some("element_not_found") => {
            let Some(text) = own_words(step, from) else {
                return Err(e);
            };
            return decision(
                Action {
                    action: ActionKind::Hover,
                    args: ActionArgs {
                        name: Some(text.clone()),
                        ..ActionArgs::default()
                    },
                },
                0.5,
                format!("Hover over the text {text:?}"),
            );
        }
        Err(e) => return Err(e),
    };
    decision(
        Action {
            action: ActionKind::Hover,
            args: element_args(&p),
        },
        p.score.min(0.9),
        format!("Hover over {:?}", p.node.name),
    )
}

/// The words of `step` after `from`, in their own case, without the fillers
/// at either end ("the Book the venue card" → "Book the venue").
fn own_words(step: &str, from: usize) -> Option<String> {
    let rest = step.get(from..)?;
    let filler = |w: &&str| FILLER.contains(&w.to_lowercase().as_str()) || *w == "card";
    let mut words: Vec<&str> = rest
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    while words.first().is_some_and(filler) {
        words.remove(0);
    }
    while words.last().is_some_and(filler) {
        words.pop();
    }
    (!words.is_empty()).then(|| words.join(" "))
}

/// "Drag Item 3 above Item 1": the source before the drop word, the target
/// after it; the target is the element that holds the target's words. Text
/// the translator's view left out (list items with nothing interactive in
/// them) is dragged and dropped by its words, which the locator finds.
pub(super) fn drag(nodes: &[SnapshotNode], step: &str) -> Result<Decision, ToolError> {
    // ASCII lower case keeps the byte offsets of `step`.
    let lower = step.to_ascii_lowercase();
    let quotes = quoted(step);
    let (source, target) = match quotes.as_slice() {
        [a, b, ..] => (a.clone(), b.clone()),
        _ => {
            let verb_end = ["drag and drop", "drag", "move"]
                .iter()
                .find_map(|v| find_words(&lower, v).map(|at| at + v.len()))
                .unwrap_or(0);
            let rest = &lower[verb_end..];
            let Some((at, len)) = DROP_WORDS
                .iter()
                .find_map(|w| find_words(rest, w).map(|at| (at, w.len())))
            else {
                return Err(fail(
                    "ambiguous_step",
                    format!("drag where? say onto, above or below what in {step:?}"),
                ));
            };
            let original = &step[verb_end..];
            (original[..at].to_string(), original[at + len..].to_string())
        }
    };
    let by_words = |phrase: &str| own_words(phrase, 0);
    let (mut args, from_name, from_score) = match pointed(nodes, &source) {
        Ok(p) => (element_args(&p), p.node.name.clone(), p.score),
        Err(e) => {
            let text = by_words(&source).ok_or(e)?;
            let args = ActionArgs {
                name: Some(text.clone()),
                ..ActionArgs::default()
            };
            (args, text, 0.5)
        }
    };
    let (onto, to_name, to_score) = match pointed(nodes, &target) {
        Ok(to) => match to.holder.and_then(|h| h.reference.clone()) {
            Some(r) => (r, to.node.name.clone(), to.score),
            None => (to.node.name.clone(), to.node.name.clone(), 0.5),
        },
        Err(e) => {
            let text = by_words(&target).ok_or(e)?;
            (text.clone(), text, 0.5)
        }
    };
    args.onto = Some(onto);
    decision(
        Action {
            action: ActionKind::Drag,
            args,
        },
        from_score.min(to_score).min(0.85),
        format!("Drag {from_name:?} onto {to_name:?}"),
    )
}

/// "Upload report.pdf", "Attach 'cv.pdf' to the Resume field": the file names
/// (quoted, or words with an extension) from the files folder, and the field
/// when the step names one (else the page's file input).
pub(super) fn upload(nodes: &[SnapshotNode], step: &str) -> Result<Decision, ToolError> {
    let quotes = quoted(step);
    let mut files: Vec<String> = quotes
        .iter()
        .filter(|q| has_extension(q))
        .cloned()
        .collect();
    if files.is_empty() {
        files = unquoted(step, &quotes)
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| "'\"“”‘’(),;".contains(c)))
            .map(|w| w.trim_end_matches('.'))
            .filter(|w| has_extension(w))
            .map(str::to_string)
            .collect();
    }
    if files.is_empty() {
        return Err(fail(
            "tool_limit",
            "an upload needs a file of the files folder named in the step (report.pdf)",
        ));
    }
    let lower = unquoted(step, &quotes).to_lowercase();
    // "… to the Resume field", "… into Attachment".
    let field = ["to the", "into the", "in the", "to", "into", "as"]
        .iter()
        .find_map(|w| find_words(&lower, w).map(|at| lower[at + w.len()..].to_string()))
        .map(|rest| {
            rest.split_whitespace()
                .filter(|w| !["field", "input", "box", "button", "file"].contains(w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|rest| !rest.trim().is_empty() && !has_extension(rest.trim()));
    // The field by its element when the view has it, else by its label.
    let mut args = match field {
        Some(name) => match pointed(nodes, &name) {
            Ok(p) if p.node.reference.is_some() => element_args(&p),
            Ok(p) => ActionArgs {
                name: Some(p.node.name.clone()),
                ..ActionArgs::default()
            },
            Err(_) => ActionArgs {
                name: own_words(&name, 0),
                ..ActionArgs::default()
            },
        },
        None => ActionArgs::default(),
    };
    let said = files.join(", ");
    match files.len() {
        1 => args.text = files.pop(),
        _ => args.values = Some(files),
    }
    decision(
        Action {
            action: ActionKind::Upload,
            args,
        },
        0.8,
        format!("Upload {said}"),
    )
}

/// `report.pdf`, `cv.docx`: a name with a short extension.
fn has_extension(word: &str) -> bool {
    match word.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
                && !word.contains(' ')
        }
        None => false,
    }
}
