//! What a refusal offers: when `browser_act` will not choose (a step that
//! fits two elements, a position the page does not hold, a name nothing
//! matches well), the error names the elements it could have meant, ranked,
//! with their refs and where they are — so that the agent's next call is one
//! `browser_click {ref}`, not a snapshot and a second guess
//! (docs/browser-act.md, "Refusals an agent can act on").

use axon_core::{Candidate, ToolError};

use super::Action;
use axon_browser::SnapshotNode;

/// Roles that say where an element is: the row, item, form or section
/// around it.
const AROUND: [&str; 14] = [
    "row",
    "listitem",
    "article",
    "form",
    "dialog",
    "alertdialog",
    "region",
    "navigation",
    "group",
    "tabpanel",
    "menu",
    "listbox",
    "list",
    "table",
];

/// `picked` (nodes of `nodes`) as candidates, in the order given.
pub(crate) fn of(nodes: &[SnapshotNode], picked: &[&SnapshotNode]) -> Vec<Candidate> {
    picked
        .iter()
        .take(axon_core::error::MAX_CANDIDATES)
        .map(|n| {
            let at = nodes.iter().position(|m| std::ptr::eq(m, *n));
            Candidate {
                reference: n.reference.clone(),
                role: n.role.clone(),
                name: n.name.clone(),
                context: at.and_then(|at| context(nodes, at)),
            }
        })
        .collect()
}

/// The elements on the page closest to what `step` says, best first: the
/// actionable ones whose names share the most words with the step (at most
/// five, none that shares nothing). What `element_not_found` offers.
pub(crate) fn closest(nodes: &[SnapshotNode], step: &str) -> Vec<Candidate> {
    of(nodes, &closest_nodes(nodes, step))
}

/// The nodes [`closest`] names, best first.
fn closest_nodes<'a>(nodes: &'a [SnapshotNode], step: &str) -> Vec<&'a SnapshotNode> {
    let words = words(step);
    let mut scored: Vec<(&SnapshotNode, usize)> = nodes
        .iter()
        .filter(|n| n.actionable())
        .map(|n| {
            let name = words_of(&n.name);
            let shared = name.iter().filter(|w| words.contains(w)).count();
            (n, shared)
        })
        .filter(|(_, shared)| *shared > 0)
        .collect();
    // Most words shared first; the page's order among equals.
    scored.sort_by_key(|(_, shared)| std::cmp::Reverse(*shared));
    scored.into_iter().take(5).map(|(n, _)| n).collect()
}

/// The codes of an element that was found but could not take the action.
const STATE_CODES: [&str; 5] = [
    "disabled",
    "not_editable",
    "not_a_select",
    "element_not_interactable",
    "element_detached",
];

/// `e`, the failure of a decided action, with the candidates the agent
/// chooses its next call from. An element found but unable to take the
/// action (disabled, read-only, not a `<select>`, covered) comes first: the
/// agent may reach it another way (the calendar beside a read-only date, the
/// control that unlocks a disabled button), followed by the closest others.
/// An element gone from the page gets the closest; other failures are left
/// as they are.
pub(crate) fn after_acting(
    e: ToolError,
    action: &Action,
    nodes: &[SnapshotNode],
    step: &str,
) -> ToolError {
    let state = e
        .code
        .as_deref()
        .is_some_and(|code| STATE_CODES.contains(&code));
    if !state || !e.candidates().is_empty() {
        return offer(e, nodes, step);
    }
    let a = &action.args;
    let tried = nodes
        .iter()
        .find(|n| match (&a.reference, &a.role, &a.name) {
            (Some(r), _, _) => n.reference.as_ref() == Some(r),
            (None, Some(role), Some(name)) => &n.role == role && n.name.eq_ignore_ascii_case(name),
            _ => false,
        });
    let mut picked: Vec<&SnapshotNode> = tried.into_iter().collect();
    for n in closest_nodes(nodes, step) {
        if picked.len() < 5 && !picked.iter().any(|p| std::ptr::eq(*p, n)) {
            picked.push(n);
        }
    }
    let candidates = of(nodes, &picked);
    e.with_candidates(candidates)
}

/// `e` with the candidates a refusal should offer, when it has none yet:
/// the closest elements to the step. Only for `element_not_found` and
/// `ambiguous_step`.
pub(crate) fn offer(e: ToolError, nodes: &[SnapshotNode], step: &str) -> ToolError {
    let refusal = matches!(
        e.code.as_deref(),
        Some("element_not_found" | "ambiguous_step")
    );
    if !refusal || !e.candidates().is_empty() {
        return e;
    }
    let candidates = closest(nodes, step);
    if !candidates.is_empty() {
        return e.with_candidates(candidates);
    }
    // Nothing shares a word with the step: what the page has, so that the
    // agent still chooses in one turn rather than asking for a snapshot.
    let first: Vec<&SnapshotNode> = nodes.iter().filter(|n| n.actionable()).take(5).collect();
    if first.is_empty() {
        return e;
    }
    let mut e = e.with_candidates(of(nodes, &first));
    e.message
        .push_str("; no element shares a word with the step: the page's first controls follow");
    e
}

/// The candidates as lines under the message: what an agent reading only
/// the text (an MCP client) chooses from.
pub(crate) fn in_message(mut e: ToolError) -> ToolError {
    if e.candidates().is_empty() {
        return e;
    }
    let lead = match e.code.as_deref() {
        Some("element_not_found") => "closest on the page",
        _ => "candidates",
    };
    e.message.push_str(&format!(
        "\n{lead} (act on one with its ref, e.g. browser_click):"
    ));
    let lines: Vec<String> = e
        .candidates()
        .iter()
        .take(axon_core::error::MAX_CANDIDATES)
        .map(|c| format!("\n- {}", c.line()))
        .collect();
    e.message.push_str(&lines.concat());
    e
}

/// Where the node at `at` is: the nearest row, item, form or section around
/// it that has a name (or, without one, the text that starts it), and the
/// text right before the node when it is not its own name.
fn context(nodes: &[SnapshotNode], at: usize) -> Option<String> {
    let node = &nodes[at];
    let mut parts = Vec::new();
    let mut depth = node.depth;
    for i in (0..at).rev() {
        let n = &nodes[i];
        if n.depth >= depth {
            continue;
        }
        depth = n.depth;
        if !AROUND.contains(&n.role.as_str()) {
            continue;
        }
        let label = match n.name.trim() {
            "" => first_text(nodes, i),
            name => Some(name.to_string()),
        };
        // A row labelled by the element itself says nothing more.
        if let Some(label) = label.filter(|l| l != node.name.trim()) {
            parts.push(format!("in {} {:?}", n.role, cut(&label)));
            break;
        }
    }
    if let Some(before) = at.checked_sub(1).map(|i| &nodes[i])
        && before.role == "text"
        && before.depth >= node.depth
        && !before.name.trim().is_empty()
        && before.name.trim() != node.name.trim()
        && !parts
            .iter()
            .any(|p| p.contains(&format!("{:?}", cut(before.name.trim()))))
    {
        parts.push(format!("after {:?}", cut(before.name.trim())));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The first text or named node inside the container at `at`.
fn first_text(nodes: &[SnapshotNode], at: usize) -> Option<String> {
    let depth = nodes[at].depth;
    nodes[at + 1..]
        .iter()
        .take_while(|n| n.depth > depth)
        .find(|n| !n.name.trim().is_empty())
        .map(|n| n.name.trim().to_string())
}

/// A label cut to 60 characters: enough to tell rows apart.
fn cut(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The words of a step that can name an element: lowercase, three letters
/// or more, or a number.
fn words(text: &str) -> Vec<String> {
    words_of(text)
        .into_iter()
        .filter(|w| !FILLER.contains(&w.as_str()))
        .collect()
}

fn words_of(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3 || w.chars().all(|c| c.is_ascii_digit()) && !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Words of a step that name no element.
const FILLER: [&str; 14] = [
    "the", "click", "press", "tap", "select", "choose", "type", "into", "and", "for", "with",
    "button", "link", "field",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: &str, name: &str, reference: Option<&str>, depth: usize) -> SnapshotNode {
        let mut n = SnapshotNode::element(role, name, reference.unwrap_or_default());
        n.reference = reference.map(str::to_string);
        n.depth = depth;
        n
    }

    fn page() -> Vec<SnapshotNode> {
        vec![
            node("form", "search", Some("e1"), 0),
            node("textbox", "Search", Some("e2"), 1),
            node("button", "Search", Some("e3"), 1),
            node("list", "", None, 0),
            node("listitem", "", None, 1),
            node("link", "Rust book", Some("e5"), 2),
            node("listitem", "", None, 1),
            node("text", "by Ferris", None, 2),
            node("link", "Async book", Some("e7"), 2),
        ]
    }

    #[test]
    fn a_candidate_says_where_it_is() {
        let nodes = page();
        let picked = [&nodes[2], &nodes[8]];
        let c = of(&nodes, &picked);
        assert_eq!(c[0].reference.as_deref(), Some("e3"));
        assert_eq!(c[0].context.as_deref(), Some("in form \"search\""));
        assert_eq!(c[1].context.as_deref(), Some("in listitem \"by Ferris\""));
        assert_eq!(
            c[0].line(),
            "button \"Search\" [ref=e3] (in form \"search\")"
        );
    }

    #[test]
    fn the_closest_share_words_with_the_step_and_the_rest_are_left_out() {
        let nodes = page();
        let c = closest(&nodes, "Click the async book link");
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(c[0].name, "Async book");
        assert_eq!(c[1].name, "Rust book");
        assert!(closest(&nodes, "Click the weather widget").is_empty());
        // A refusal still names what the page has: its first controls.
        let e = ToolError::failed("nothing fits").with_code("element_not_found");
        let e = offer(e, &nodes, "Click the weather widget");
        let refs: Vec<_> = e
            .candidates()
            .iter()
            .filter_map(|c| c.reference.clone())
            .collect();
        assert_eq!(refs, ["e2", "e3", "e5", "e7"], "{e:?}");
        assert!(
            e.message.contains("the page's first controls"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_refusal_gets_the_closest_and_lists_them_in_its_text() {
        let nodes = page();
        let e = ToolError::failed("nothing fits").with_code("element_not_found");
        let e = in_message(offer(e, &nodes, "open the async book"));
        assert_eq!(e.candidates().len(), 2);
        assert!(
            e.message.contains("- link \"Async book\" [ref=e7]"),
            "{}",
            e.message
        );
        // Other errors are left as they are.
        let other = offer(
            ToolError::failed("x").with_code("tool_limit"),
            &nodes,
            "book",
        );
        assert!(other.candidates().is_empty());
    }

    #[test]
    fn an_element_that_could_not_take_the_action_is_offered_first() {
        use super::super::{ActionArgs, ActionKind};
        let nodes = page();
        let tried = Action {
            action: ActionKind::Click,
            args: ActionArgs {
                reference: Some("e5".into()),
                ..ActionArgs::default()
            },
        };
        let e = ToolError::failed("link: disabled").with_code("disabled");
        let e = in_message(after_acting(e, &tried, &nodes, "open the async book"));
        let refs: Vec<_> = e
            .candidates()
            .iter()
            .map(|c| c.reference.as_deref().unwrap_or_default())
            .collect();
        assert_eq!(refs, ["e5", "e7"], "the one tried, then the closest");
        assert!(e.message.contains("[ref=e5]"), "{}", e.message);
        // An element gone: the closest; a failure of the page: nothing.
        let gone = ToolError::failed("gone").with_code("element_not_found");
        assert_eq!(
            after_acting(gone, &tried, &nodes, "async book")
                .candidates()
                .len(),
            2
        );
        let page_error = ToolError::failed("crashed").with_code("browser_crashed");
        assert!(
            after_acting(page_error, &tried, &nodes, "async book")
                .candidates()
                .is_empty()
        );
    }
}
