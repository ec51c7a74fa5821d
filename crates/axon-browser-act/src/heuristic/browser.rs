//! Steps about the browser rather than an element of the page: answering the
//! JavaScript dialog a session holds open ("Accept the dialog", "Answer the
//! prompt with 'Bob'"), switching to and closing tabs ("Switch to the new
//! tab", "Close this window"), and going back and forward ("Go back").
//!
//! Each reads the state a person sees: a dialog in front of the page answers
//! nothing else, so a step that does not answer it fails `dialog_open`; a tab
//! step is one only when the session has tabs to speak of and the page has no
//! tab widget of that name ("Switch to the Billing tab" on a page with such a
//! tab is a click); "go back" is the browser's button unless the page has its
//! own Back link and the step names a button or a link.

use axon_core::ToolError;

use super::{CLICKABLE, decision, fail, find_words, is_candidate, norm, quoted, similarity};
use crate::{Action, ActionArgs, ActionKind, Decision, PageDialog, PageTab, StepInput};
use axon_browser::SnapshotNode;

/// Words that say OK to a dialog.
const ACCEPT: [&str; 12] = [
    "accept", "ok", "okay", "confirm", "yes", "agree", "allow", "continue", "leave", "approve",
    "proceed", "answer",
];

/// Words that say Cancel.
const DISMISS: [&str; 9] = [
    "dismiss", "cancel", "decline", "reject", "deny", "no", "close", "stay", "refuse",
];

/// Answer the dialog the session holds open, or fail `dialog_open` when the
/// step does not say how.
pub(super) fn answer_dialog(dialog: &PageDialog, step: &str) -> Result<Decision, ToolError> {
    let lower = norm(step);
    let first = |words: &[&str]| words.iter().filter_map(|w| find_words(&lower, w)).min();
    let text = match dialog.kind.as_str() {
        "prompt" => prompt_text(step),
        _ => None,
    };
    // The earliest word decides: "OK it, don't cancel".
    let accept = match (first(&ACCEPT), first(&DISMISS)) {
        (Some(a), Some(d)) => a < d,
        (Some(_), None) => true,
        (None, Some(_)) => false,
        (None, None) if text.is_some() => true,
        (None, None) => {
            return Err(fail(
                "dialog_open",
                format!(
                    "a {} dialog is open: {:?}; the page does nothing else until it is answered: say whether to accept or dismiss it",
                    dialog.kind, dialog.message
                ),
            ));
        }
    };
    let said = match (&text, accept) {
        (Some(t), _) => format!("Answer the {} {:?} with {t:?}", dialog.kind, dialog.message),
        (None, true) => format!("Accept the {} {:?}", dialog.kind, dialog.message),
        (None, false) => format!("Dismiss the {} {:?}", dialog.kind, dialog.message),
    };
    decision(
        Action {
            action: ActionKind::HandleDialog,
            args: ActionArgs {
                accept: Some(accept),
                text: if accept { text } else { None },
                ..ActionArgs::default()
            },
        },
        0.9,
        said,
    )
}

/// What a step types into a prompt: its quoted text, else the words after
/// "type", "enter", "with" or "answer" up to a joining word.
fn prompt_text(step: &str) -> Option<String> {
    if let Some(q) = quoted(step).into_iter().next() {
        return Some(q);
    }
    let lower = step.to_lowercase();
    let at = ["with", "type", "enter", "answer"]
        .iter()
        .filter_map(|w| find_words(&lower, w).map(|at| at + w.len()))
        .min()?;
    let words: Vec<&str> = step[at..]
        .split_whitespace()
        .take_while(|w| {
            ![
                "into", "in", "and", "then", "to", "on", "the", "prompt", "dialog",
            ]
            .contains(&w.to_lowercase().as_str())
        })
        .collect();
    let text = words.join(" ");
    let text = text.trim_end_matches(['.', ',']).trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// A step about the session's tabs, when it is one (see the module docs).
pub(super) fn tab_step(input: &StepInput, step: &str) -> Option<Result<Decision, ToolError>> {
    let tabs = &input.tabs;
    if tabs.is_empty() {
        return None;
    }
    let lower = norm(step);
    let names_tab = ["tab", "window"]
        .iter()
        .any(|w| find_words(&lower, w).is_some());
    let popup = find_words(&lower, "popup").is_some() || find_words(&lower, "pop-up").is_some();
    if page_tab_named(&input.snapshot.nodes, &lower)
        || page_control_named(&input.snapshot.nodes, &lower)
    {
        return None;
    }
    // "Click the link that opens a new tab": a click on the page.
    let clicks = ["click", "tap", "press", "follow", "hit"]
        .iter()
        .filter_map(|w| find_words(&lower, w))
        .min();
    let tab_verb = TAB_VERBS.iter().filter_map(|w| find_words(&lower, w)).min();
    if clicks.is_some_and(|c| tab_verb.is_none_or(|t| c < t)) {
        return None;
    }
    let closing = find_words(&lower, "close").is_some();
    let switching = TAB_VERBS[1..]
        .iter()
        .any(|w| find_words(&lower, w).is_some());
    // "Close the popup" without "tab" or "window" is the page's own popup.
    if closing && !names_tab {
        return None;
    }
    if !closing && !(switching && (names_tab || popup)) {
        return None;
    }
    let current = tabs.iter().position(|t| t.current).unwrap_or(0);
    let which = which_tab(tabs, &lower, current, popup);
    if closing {
        if tabs.len() == 1 {
            return Some(Err(fail(
                "tool_limit",
                "the session has one tab: closing it would end the session (browser_session_close does that)",
            )));
        }
        let index = which.unwrap_or(current);
        return Some(decision(
            Action {
                action: ActionKind::CloseTab,
                args: ActionArgs {
                    index: Some(index),
                    ..ActionArgs::default()
                },
            },
            0.85,
            format!("Close tab {index} ({})", tab_label(&tabs[index])),
        ));
    }
    // "Open the Specs tab" with one browser tab and no tab widget of that
    // name: not about browser tabs unless its words say so.
    let browserish = [
        "new", "other", "original", "previous", "opened", "window", "popup",
    ]
    .iter()
    .any(|w| find_words(&lower, w).is_some());
    if tabs.len() == 1 && !browserish {
        return None;
    }
    let Some(index) = which else {
        return match tabs.len() {
            1 => Some(Err(fail(
                "element_not_found",
                "the session has one tab: no page opened another",
            ))),
            _ => Some(Err(fail(
                "ambiguous_step",
                format!(
                    "which tab? {}",
                    tabs.iter().map(tab_label).collect::<Vec<_>>().join("; ")
                ),
            ))),
        };
    };
    if index == current && tabs.len() == 1 {
        return Some(Err(fail(
            "element_not_found",
            "the session has one tab: no page opened another",
        )));
    }
    Some(decision(
        Action {
            action: ActionKind::SelectTab,
            args: ActionArgs {
                index: Some(index),
                ..ActionArgs::default()
            },
        },
        0.85,
        format!("Switch to tab {index} ({})", tab_label(&tabs[index])),
    ))
}

/// The verbs of a tab step: close, then those that switch.
const TAB_VERBS: [&str; 11] = [
    "close", "switch", "go", "return", "back", "move", "select", "focus", "change", "use", "open",
];

/// Whether a control of the page is named in full by the step ("Open the
/// welcome page in a new tab" is that link's name).
fn page_control_named(nodes: &[SnapshotNode], lower: &str) -> bool {
    nodes.iter().any(|n| {
        let name = norm(&n.name);
        is_candidate(n, &CLICKABLE)
            && name.split_whitespace().count() >= 2
            && find_words(lower, &name).is_some()
    })
}

/// Whether the page has a tab widget the step names ("the Billing tab"; a
/// `<div>` acting as one counts).
fn page_tab_named(nodes: &[SnapshotNode], lower: &str) -> bool {
    let words = strip_tab_words(lower);
    nodes.iter().any(|n| {
        (n.role == "tab" || n.is_clickable())
            && !n.name.is_empty()
            && (find_words(lower, &norm(&n.name)).is_some()
                || (!words.is_empty() && similarity(&words, &n.name) >= 0.6))
    })
}

/// The step's words that could name a tab's title.
fn strip_tab_words(lower: &str) -> String {
    const NOT_A_TITLE: [&str; 22] = [
        "switch", "go", "return", "back", "move", "select", "focus", "change", "use", "open",
        "close", "to", "the", "a", "tab", "window", "popup", "pop-up", "browser", "this", "that",
        "titled",
    ];
    lower
        .split_whitespace()
        .filter(|w| !NOT_A_TITLE.contains(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tab a step names: new/last (the latest opened), original/first/main,
/// previous, other (of two), this/current, an ordinal, or its title.
fn which_tab(tabs: &[PageTab], lower: &str, current: usize, popup: bool) -> Option<usize> {
    let has = |w: &str| find_words(lower, w).is_some();
    let last = tabs.len() - 1;
    if ["new", "newest", "latest", "opened", "last"]
        .iter()
        .any(|w| has(w))
        || (popup && tabs.len() > 1)
    {
        return Some(last);
    }
    if ["original", "first", "main", "initial", "old"]
        .iter()
        .any(|w| has(w))
    {
        return Some(0);
    }
    if has("previous") {
        return Some(current.saturating_sub(1));
    }
    if has("other") && tabs.len() == 2 {
        return Some(1 - current.min(1));
    }
    if has("this") || has("current") {
        return Some(current);
    }
    let ordinal = [("second", 1), ("third", 2), ("fourth", 3), ("fifth", 4)]
        .iter()
        .find(|(w, _)| has(w))
        .map(|(_, i)| *i)
        .or_else(|| {
            lower
                .split_whitespace()
                .skip_while(|w| *w != "tab" && *w != "window")
                .nth(1)
                .and_then(|n| n.trim_start_matches('#').parse::<usize>().ok())
                .and_then(|n| n.checked_sub(1))
        });
    if let Some(i) = ordinal.filter(|i| *i < tabs.len()) {
        return Some(i);
    }
    let words = strip_tab_words(lower);
    if words.is_empty() {
        return None;
    }
    let mut scored: Vec<(usize, f64)> = tabs
        .iter()
        .map(|t| (t.index, similarity(&words, &t.title)))
        .filter(|(_, s)| *s >= 0.5)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    match scored.as_slice() {
        [(i, _)] => Some(*i),
        [(i, a), (_, b), ..] if a - b > 0.08 => Some(*i),
        _ => None,
    }
}

fn tab_label(tab: &PageTab) -> String {
    match tab.title.is_empty() {
        true => tab.url.clone(),
        false => format!("{:?}", tab.title),
    }
}

/// "Go back", "return to the previous page", "go forward": the browser's
/// history, unless the step names the page's own Back button or link.
pub(super) fn back_forward_step(
    nodes: &[SnapshotNode],
    lower: &str,
) -> Option<Result<Decision, ToolError>> {
    let lower = norm(lower);
    let has = |w: &str| find_words(&lower, w).is_some();
    let going = [
        "go", "navigate", "return", "head", "step", "take", "move", "browse",
    ]
    .iter()
    .any(|w| has(w));
    let back = has("back") || (going && has("previous page"));
    let forward = has("forward");
    if !going || back == forward {
        return None;
    }
    let way = if back { "back" } else { "forward" };
    // "Click the Back link": the page's own control.
    let names_control = ["button", "link", "arrow", "icon"].iter().any(|w| has(w));
    let page_has_one = nodes.iter().any(|n| {
        is_candidate(n, &CLICKABLE)
            && find_words(&norm(&n.name), way).is_some()
            && norm(&n.name).split_whitespace().count() <= 3
    });
    if names_control && page_has_one {
        return None;
    }
    let (action, said) = match back {
        true => (ActionKind::GoBack, "Go back"),
        false => (ActionKind::GoForward, "Go forward"),
    };
    Some(decision(
        Action {
            action,
            args: ActionArgs::default(),
        },
        0.9,
        format!("{said} in the tab's history"),
    ))
}
