//! The page as a translator sees it: interactive elements and the text near
//! them, hidden nodes already gone (the snapshot skips ignored nodes), long
//! runs of list items cut with a count, every element with its ref. And the
//! execution agent's prompt around it (role, boundaries, tool rules, one JSON object out).

use serde::Serialize;

use super::StepInput;
use axon_browser::SnapshotNode;

/// At most this many nodes reach a prompt: a long page's snapshot is cut to
/// its controls and the text nearest them, so a prompt's size is bounded
/// whatever the page.
pub const MAX_PROMPT_NODES: usize = 300;

/// More items than this in a run of siblings (options, list items, rows) are
/// cut to this many plus a count.
const LIST_KEEP: usize = 10;

/// Containers a step may name ("the button in the dialog"), kept as the
/// parents of what they hold.
const CONTAINERS: [&str; 12] = [
    "iframe",
    "dialog",
    "alertdialog",
    "navigation",
    "form",
    // The items that say which row's "Edit" is which: a table's rows and
    // cells, a list's items, a feed's articles.
    "row",
    "cell",
    "columnheader",
    "rowheader",
    "list",
    "listitem",
    "article",
];

/// The snapshot, compressed for a prompt.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CompressedSnapshot {
    /// The kept nodes, a long list's overflow included (the text shows
    /// its first 10 and a count; the heuristic and validation see them all).
    pub nodes: Vec<SnapshotNode>,
    /// The same as lines, what the prompt shows.
    pub text: String,
    /// Nodes dropped (text far from any element, list overflow, the cap).
    pub dropped: usize,
    /// The estimated token count of `text` (4 characters a token).
    pub tokens: usize,
}

/// Keep interactive elements, headings, containers (frames, dialogs, forms,
/// navigation), and text right before an element (a label, a price next to a
/// button); cut long lists; cap at `max`.
pub fn compress(nodes: &[SnapshotNode], max: usize) -> CompressedSnapshot {
    let interactive = |n: &SnapshotNode| n.actionable();
    let mut keep = vec![false; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        if interactive(n) || n.role == "heading" || CONTAINERS.contains(&n.role.as_str()) {
            keep[i] = true;
            // The text just before an element names or explains it.
            if i > 0 && nodes[i - 1].role == "text" && interactive(n) {
                keep[i - 1] = true;
            }
        }
    }
    let mut out = Vec::new();
    let mut text = String::new();
    let mut dropped = 0;
    let mut run: Option<(String, usize, usize)> = None; // (role, depth, count)
    for (i, n) in nodes.iter().enumerate() {
        if !keep[i] {
            dropped += 1;
            continue;
        }
        let same = run
            .as_ref()
            .is_some_and(|(role, depth, _)| *role == n.role && *depth == n.depth);
        if same {
            if let Some((_, _, count)) = run.as_mut() {
                *count += 1;
                if *count > LIST_KEEP {
                    // Not shown, but still an element the translator may
                    // name ("Item 37") and the reply may pick.
                    dropped += 1;
                    if out.len() < max {
                        out.push(n.clone());
                    }
                    continue;
                }
            }
        } else {
            flush_run(&mut run, &mut text);
            run = Some((n.role.clone(), n.depth, 1));
        }
        if out.len() >= max {
            dropped += 1;
            continue;
        }
        text.push_str(&n.line());
        out.push(n.clone());
    }
    flush_run(&mut run, &mut text);
    let tokens = text.len().div_ceil(4);
    CompressedSnapshot {
        nodes: out,
        text,
        dropped,
        tokens,
    }
}

fn flush_run(run: &mut Option<(String, usize, usize)>, text: &mut String) {
    if let Some((role, depth, count)) = run.take()
        && count > LIST_KEEP
    {
        text.push_str(&format!(
            "{}- … {} more {role}\n",
            "  ".repeat(depth),
            count - LIST_KEEP
        ));
    }
}

/// The execution agent's system prompt: role, boundaries, tool selection rules, one JSON
/// object out.
pub(crate) const SYSTEM_PROMPT: &str = r#"You are the Execution Agent for a browser automation system.
Your scope is local execution only: you receive one plan step and choose exactly one tool call to move that step forward.

You MUST NOT create, reorder or revise the plan; ask questions; perform multi-step strategies in one response; judge whether the overall task is complete; or format a user-facing response.
You MUST execute one plan step incrementally, choose exactly one tool call, and base any click targets ONLY on elements present in DOM_SNAPSHOT (use their role and name exactly as shown, or their ref).

Tool selection rules:
- If PLAN_STEP implies moving to a website and PLAN_STEP itself names its address (a URL, a host, a site by name), use navigate(url); to reach another page, click the link that leads there.
- If PLAN_STEP implies searching and a search UI exists, use search(text).
- If PLAN_STEP implies interacting with a page element, use click with an ARIA role + accessible name from DOM_SNAPSHOT.
- Use type(text) to type; give role + name (or ref) of the field from DOM_SNAPSHOT, or none to type into the focused element.
- Use select(role, name, text) to pick the option `text` of a combobox or listbox.
- Use scroll(direction: up|down) when the target is likely off-screen.
- Use wait(seconds) only for brief page loading or transitions when no better action is available.
- Use press_key(key) for simple submissions or escapes (Enter, Escape, Tab).
- Use hover(ref) to move the pointer over an element (menus that open on hover); an element shown only as text may be given by name alone.
- Use drag(ref, onto) to drag an element onto another (onto is the target's ref).
- Use upload(ref, text) to give a file input the file named text (a file name the step gives); without a ref, the page's file input.
- Use go_back or go_forward for the browser's history buttons.
- If DIALOG is shown, the page answers nothing until it is answered: use handle_dialog(accept: true|false, text for a prompt's answer), or fail with error_type dialog_open when the step does not say how to answer it.
- If TABS are shown, use select_tab(index) to switch tabs and close_tab(index) to close one.

If you cannot make progress because of missing elements, ambiguity or tool limitations (captchas), return status "failure" with error_type element_not_found, ambiguous_step or tool_limit. Do not retry and do not propose alternatives.

Output exactly one JSON object and nothing else:
{"action": "navigate|click|type|search|scroll|press_key|wait|select|hover|drag|upload|go_back|go_forward|handle_dialog|select_tab|close_tab",
 "args": {"url": null, "role": null, "name": null, "text": null, "direction": null, "key": null, "seconds": null, "ref": null, "onto": null, "accept": null, "index": null},
 "status": "success|failure",
 "error_type": "none|element_not_found|ambiguous_step|tool_limit|navigation_blocked|dialog_open|unknown",
 "message": "one concise sentence"}"#;

/// The user message: goal, step, URL, the open dialog and the tabs when
/// there are any, snapshot.
pub(crate) fn user_prompt(input: &StepInput) -> String {
    let mut extra = String::new();
    if let Some(d) = &input.dialog {
        extra.push_str(&format!(
            "DIALOG: {} {:?} (open: answer it with handle_dialog)\n",
            d.kind, d.message
        ));
    }
    if !input.tabs.is_empty() {
        extra.push_str("TABS:\n");
        for t in &input.tabs {
            let current = if t.current { " (current)" } else { "" };
            extra.push_str(&format!("- {} {:?} {}{current}\n", t.index, t.title, t.url));
        }
    }
    format!(
        "MAIN_GOAL: {}\nPLAN_STEP: {}\nURL: {}\nALLOWED_TOOLS: {}\n{extra}\nDOM_SNAPSHOT:\n{}\nSelect the one action for this step.",
        if input.main_goal.is_empty() {
            "(not given)"
        } else {
            &input.main_goal
        },
        input.plan_step,
        input.url,
        super::ACTIONS.join(", "),
        input.snapshot.text
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: &str, name: &str, depth: usize, r: Option<&str>) -> SnapshotNode {
        SnapshotNode {
            reference: r.map(str::to_string),
            role: role.into(),
            name: name.into(),
            depth,
            value: None,
            states: Vec::new(),
            name_from: None,
        }
    }

    #[test]
    fn keeps_elements_and_their_labels_and_cuts_long_lists() {
        let mut nodes = vec![
            node("text", "Far away paragraph", 0, None),
            node("heading", "Pick", 0, Some("e1")),
            node("text", "Price: 3 €", 0, None),
            node("button", "Buy", 0, Some("e2")),
            node("listbox", "Fruit", 0, Some("e3")),
        ];
        for i in 0..25 {
            nodes.push(node("option", &format!("Fruit {i}"), 1, Some("e9")));
        }
        nodes.push(node("link", "Next", 0, Some("e4")));
        let c = compress(&nodes, 100);
        let names: Vec<&str> = c.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(&names[..4], ["Pick", "Price: 3 €", "Buy", "Fruit"]);
        assert_eq!(names.len(), 4 + 25 + 1, "the overflow is kept, unshown");
        assert!(
            c.text.contains("- … 15 more option\n  ") || c.text.contains("  - … 15 more option\n"),
            "{}",
            c.text
        );
        assert!(!c.text.contains("Far away"));
        assert_eq!(c.dropped, 1 + 15);
        assert_eq!(c.tokens, c.text.len().div_ceil(4));
        assert!(c.text.ends_with("- link \"Next\" [ref=e4]\n"), "{}", c.text);
        let capped = compress(&nodes, 3);
        assert_eq!(capped.nodes.len(), 3);
    }
}
