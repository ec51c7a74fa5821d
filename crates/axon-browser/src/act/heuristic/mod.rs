//! The offline translator: plan step text matched against the snapshot, with
//! no model. Deterministic: the same step on the same page gives the same
//! action.
//!
//! 0. A dialog the session holds open is answered or nothing happens; steps
//!    about tabs, uploads, drags, hovering and history have their own
//!    readings (`browser`, `pointer`).
//! 1. Things no action can do (captchas, printing) are `tool_limit`.
//! 2. The earliest verb in the step picks the action: go to / open / visit
//!    (with a URL) → navigate; search for / look up → search; type / enter /
//!    fill in / write → type; select / choose / pick → select (or a click on a
//!    checkbox, radio or option of that name); check / tick / uncheck → click
//!    a checkbox; click / press / tap / follow / submit / log in → click (or
//!    press_key when a key is named); scroll → scroll; wait → wait.
//! 3. Targets: a quoted string if there is one, else the step's words minus
//!    verbs and filler; role words ("button", "link", "field", …) steer the
//!    match. Every candidate element gets a score (exact name 1.0, a name
//!    containing the target or contained in it 0.5–0.9, else word overlap);
//!    nothing above 0.35 is `element_not_found`, two candidates within 0.08
//!    of each other are `ambiguous_step`.

use async_trait::async_trait;
use axon_core::{ToolContext, ToolError};

use super::{Action, ActionArgs, ActionKind, ActionTranslator, Decision, StepInput};
use crate::snapshot::SnapshotNode;

/// The heuristic translator (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Heuristic;

#[async_trait]
impl ActionTranslator for Heuristic {
    fn name(&self) -> &'static str {
        "heuristic"
    }

    async fn translate(&self, input: &StepInput, _: &ToolContext) -> Result<Decision, ToolError> {
        decide(input)
    }
}

const NOT_FOUND: f64 = 0.35;
const TIE: f64 = 0.08;

fn fail(code: &str, message: impl Into<String>) -> ToolError {
    ToolError::failed(message).with_code(code)
}

/// Strings in quotes: '…', "…", “…”, ‘…’ (an apostrophe inside a word is not
/// a quote).
fn quoted(step: &str) -> Vec<String> {
    let chars: Vec<char> = step.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let close = match chars[i] {
            '"' => Some('"'),
            '\'' => Some('\''),
            '“' => Some('”'),
            '‘' => Some('’'),
            _ => None,
        };
        let at_start = i == 0 || !chars[i - 1].is_alphanumeric();
        if let (Some(close), true) = (close, at_start) {
            let end = (i + 1..chars.len()).find(|&j| {
                chars[j] == close && (j + 1 == chars.len() || !chars[j + 1].is_alphanumeric())
            });
            if let Some(end) = end {
                out.push(chars[i + 1..end].iter().collect::<String>());
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// `text` without its quoted parts.
fn unquoted(text: &str, quotes: &[String]) -> String {
    let mut t = text.to_string();
    for q in quotes {
        for (open, close) in [("'", "'"), ("\"", "\""), ("“", "”"), ("‘", "’")] {
            t = t.replace(&format!("{open}{q}{close}"), " ");
        }
    }
    t
}

/// Lower case, words only (a close sign reads as the word "close").
fn norm(s: &str) -> String {
    let s = if s.contains(CLOSE_SIGNS) {
        s.replace(CLOSE_SIGNS, " close ")
    } else {
        s.to_string()
    };
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '@' && c != '.' && c != '-')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Signs that label a close button.
const CLOSE_SIGNS: [char; 4] = ['×', '✕', '✖', '⨯'];

/// Where `phrase` occurs in `lower` as whole words.
fn find_words(lower: &str, phrase: &str) -> Option<usize> {
    // An empty phrase is nowhere (a name of signs only, norm'd to nothing).
    if phrase.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(at) = lower[from..].find(phrase) {
        let start = from + at;
        let end = start + phrase.len();
        let before = lower[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let after = lower[end..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        if before && after {
            return Some(start);
        }
        from = start + phrase.len().max(1);
    }
    None
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Verb {
    Navigate,
    Search,
    Type,
    Select,
    Check,
    Click,
    Close,
    Set,
    Scroll,
}

const VERBS: [(&str, Verb); 51] = [
    ("go to", Verb::Navigate),
    ("navigate to", Verb::Navigate),
    ("navigate", Verb::Navigate),
    ("visit", Verb::Navigate),
    ("open", Verb::Navigate),
    ("search for", Verb::Search),
    ("search", Verb::Search),
    ("look up", Verb::Search),
    ("type", Verb::Type),
    ("enter", Verb::Type),
    ("fill in", Verb::Type),
    ("fill", Verb::Type),
    ("write", Verb::Type),
    ("input", Verb::Type),
    ("put", Verb::Type),
    ("use", Verb::Type),
    ("select", Verb::Select),
    ("choose", Verb::Select),
    ("pick", Verb::Select),
    ("uncheck", Verb::Check),
    ("untick", Verb::Check),
    ("check", Verb::Check),
    ("tick", Verb::Check),
    ("toggle", Verb::Check),
    ("turn on", Verb::Check),
    ("turn off", Verb::Check),
    ("turn", Verb::Check),
    ("enable", Verb::Check),
    ("disable", Verb::Check),
    ("switch to", Verb::Click),
    ("switch", Verb::Check),
    ("click", Verb::Click),
    ("clicking", Verb::Click),
    ("tap", Verb::Click),
    ("press", Verb::Click),
    ("hit", Verb::Click),
    ("follow", Verb::Click),
    ("download", Verb::Click),
    ("submit", Verb::Click),
    ("log in", Verb::Click),
    ("sign in", Verb::Click),
    ("expand", Verb::Click),
    ("focus", Verb::Click),
    ("collapse", Verb::Click),
    ("show", Verb::Click),
    ("reveal", Verb::Click),
    ("close", Verb::Close),
    ("dismiss", Verb::Close),
    ("set", Verb::Set),
    ("change", Verb::Set),
    ("scroll", Verb::Scroll),
];

/// Key names people write, and the key they mean.
const KEYS: [(&str, &str); 18] = [
    ("enter", "Enter"),
    ("return", "Enter"),
    ("tab", "Tab"),
    ("escape", "Escape"),
    ("esc", "Escape"),
    ("backspace", "Backspace"),
    ("delete", "Delete"),
    ("space", " "),
    ("spacebar", " "),
    ("arrow down", "ArrowDown"),
    ("down arrow", "ArrowDown"),
    ("arrow up", "ArrowUp"),
    ("up arrow", "ArrowUp"),
    ("arrow left", "ArrowLeft"),
    ("arrow right", "ArrowRight"),
    ("page down", "PageDown"),
    ("page up", "PageUp"),
    ("home", "Home"),
];

/// Words that say which kind of element, and the roles they mean.
const ROLE_WORDS: [(&str, &[&str]); 20] = [
    ("button", &["button"]),
    ("link", &["link"]),
    ("checkbox", &["checkbox", "switch"]),
    ("check box", &["checkbox", "switch"]),
    ("switch", &["switch", "checkbox"]),
    ("radio", &["radio"]),
    ("tab", &["tab"]),
    ("field", &FIELD_ROLES),
    ("input", &FIELD_ROLES),
    ("textbox", &["textbox", "searchbox"]),
    ("text box", &["textbox", "searchbox"]),
    ("text area", &["textbox"]),
    ("dropdown", &["combobox", "listbox"]),
    ("drop-down", &["combobox", "listbox"]),
    (
        "menu item",
        &["menuitem", "menuitemcheckbox", "menuitemradio"],
    ),
    ("option", &["option", "radio"]),
    ("item", &["listitem", "option", "menuitem", "treeitem"]),
    ("entry", &["listitem", "option", "treeitem"]),
    ("folder", &["treeitem"]),
    ("box", &["textbox", "searchbox", "combobox", "checkbox"]),
];

/// Roles a value is typed into (the role words "field" and "input").
const FIELD_ROLES: [&str; 7] = [
    "textbox",
    "searchbox",
    "combobox",
    "spinbutton",
    "date",
    "time",
    "datetime",
];

/// Words that never name a target (articles, role nouns, politeness).
const FILLER: [&str; 35] = [
    "the",
    "a",
    "an",
    "then",
    "please",
    "page",
    "this",
    "that",
    "your",
    "my",
    "its",
    "it",
    "button",
    "link",
    "checkbox",
    "box",
    "field",
    "input",
    "tab",
    "dropdown",
    "drop-down",
    "option",
    "menu",
    "item",
    "radio",
    "text",
    "textbox",
    "value",
    "labelled",
    "list",
    "entry",
    "area",
    "section",
    "folder",
    "widget",
];

/// Words that join a target to the rest of the step ("into the Username
/// field"): dropped before it only ("log in" keeps its "in").
const JOINERS: [&str; 11] = [
    "on", "to", "in", "into", "of", "for", "from", "with", "as", "at", "and",
];

const EDITABLE: [&str; 7] = [
    "textbox",
    "searchbox",
    "combobox",
    "spinbutton",
    "date",
    "time",
    "datetime",
];
const CLICKABLE: [&str; 16] = [
    "button",
    "link",
    "checkbox",
    "radio",
    "combobox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "treeitem",
    "textbox",
    "searchbox",
    "listbox",
    "DisclosureTriangle",
];

/// Whether `text` has an ordinal ("second", "3rd", "last", "#2", "number 2").
fn has_ordinal(text: &str) -> bool {
    let lower = norm(text);
    lower.split_whitespace().any(|w| {
        ORDINALS.iter().any(|(o, _)| *o == w)
            || w.strip_prefix('#')
                .is_some_and(|d| d.parse::<usize>().is_ok())
    }) || find_words(&lower, "number").is_some()
}

/// The role words of a step ("link", "tab"), which target words drop but a
/// positional pick needs back.
fn role_words(step: &str) -> String {
    let lower = norm(step);
    ROLE_WORDS
        .iter()
        .filter(|(w, _)| find_words(&lower, w).is_some())
        .map(|(w, _)| *w)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The roles the step's words point at, if any.
fn role_hint(lower: &str) -> Option<&'static [&'static str]> {
    ROLE_WORDS
        .iter()
        .find(|(w, _)| find_words(lower, w).is_some())
        .map(|(_, roles)| *roles)
}

/// The step's words that name the target: verbs, role words and filler out.
fn target_words(text: &str, verb: &str) -> String {
    let lower = norm(text).replacen(verb, " ", 1);
    let mut words: Vec<&str> = lower
        .split_whitespace()
        .filter(|w| !FILLER.contains(w))
        .collect();
    while words.first().is_some_and(|w| JOINERS.contains(w)) {
        words.remove(0);
    }
    words.join(" ")
}

/// A word without its inflection ("wrapping", "colours", "opened").
fn stem(w: &str) -> &str {
    if let Some(s) = w.strip_suffix("ing").filter(|s| s.len() > 2) {
        // "wrapping" → "wrap", "setting" → "set".
        let b = s.as_bytes();
        if b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2] {
            return &s[..s.len() - 1];
        }
        return s;
    }
    if let Some(s) = w.strip_suffix("ed").filter(|s| s.len() > 3) {
        return s;
    }
    w.strip_suffix('s').filter(|s| s.len() > 2).unwrap_or(w)
}

/// Whether two words are the same word, allowing one typo (a letter
/// missing, extra, wrong or two swapped) in words of five letters or more.
fn same_word(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().min(b.len()) < 5 || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    // Optimal string alignment distance, at most 1.
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, row);
    }
    prev[b.len()] <= 1
}

/// Whether `n` is a candidate among `roles`: one of them, or (for a click) an
/// element that acts as a control without a role.
fn is_candidate(n: &SnapshotNode, roles: &[&str]) -> bool {
    n.reference.is_some()
        && (roles.contains(&n.role.as_str()) || (roles.contains(&"button") && n.is_clickable()))
}

/// How well `name` fits `target`, 0..=1.
fn similarity(target: &str, name: &str) -> f64 {
    let t = norm(target);
    let n = norm(name);
    if t.is_empty() || n.is_empty() {
        return 0.0;
    }
    if t == n {
        return 1.0;
    }
    if find_words(&n, &t).is_some() {
        return 0.6 + 0.3 * t.len() as f64 / n.len() as f64;
    }
    if find_words(&t, &n).is_some() {
        return 0.5 + 0.3 * n.len() as f64 / t.len() as f64;
    }
    let tw: Vec<&str> = t.split(' ').map(stem).collect();
    let nw: Vec<&str> = n.split(' ').map(stem).collect();
    let common = tw
        .iter()
        .filter(|w| nw.iter().any(|n| same_word(w, n)))
        .count() as f64;
    let union = (tw.len() + nw.len()) as f64 - common;
    0.8 * common / union
}

/// The best element for `target` among `roles` (all interactive ones when
/// `None`), steered by `hint`.
fn best<'a>(
    nodes: &'a [SnapshotNode],
    target: &str,
    roles: &[&str],
    hint: Option<&[&str]>,
) -> Result<(&'a SnapshotNode, f64), ToolError> {
    let mut scored: Vec<(&SnapshotNode, f64)> = nodes
        .iter()
        .filter(|n| is_candidate(n, roles))
        .map(|n| {
            let mut s = similarity(target, &n.name);
            if let Some(hint) = hint {
                // An element without a role may be what the word says (a
                // `<div>` tab): neither helped nor pushed down.
                // Nor is one whose name holds the word ("Open the page in
                // a new tab" is a link).
                let named_so = ROLE_WORDS
                    .iter()
                    .any(|(w, roles)| *roles == hint && find_words(&norm(&n.name), w).is_some());
                if hint.contains(&n.role.as_str()) {
                    s += 0.15;
                } else if !n.is_clickable() && !named_so {
                    s -= 0.3;
                }
            }
            (n, s.min(1.0))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let Some(&(top, score)) = scored.first() else {
        return Err(fail(
            "element_not_found",
            format!("the page has no {} to act on", roles.join("/")),
        ));
    };
    if score < NOT_FOUND {
        return Err(fail(
            "element_not_found",
            format!(
                "nothing on the page matches {target:?} (closest: {} {:?})",
                top.role, top.name
            ),
        ));
    }
    if let Some(&(second, other)) = scored.get(1)
        && other >= score - TIE
    {
        return Err(fail(
            "ambiguous_step",
            format!(
                "{target:?} fits both {} {:?} and {} {:?}; say which",
                top.role, top.name, second.role, second.name
            ),
        ));
    }
    Ok((top, score))
}

/// An element and why it was taken: `button "Log in" (matched: "login" ≈
/// "Log in", words)`; the name's source when the page did not give it.
fn matched(target: &str, node: &SnapshotNode) -> String {
    let t = norm(target);
    let n = norm(&node.name);
    let how = if t.is_empty() {
        "the only one"
    } else if t == n {
        "the name"
    } else if find_words(&n, &t).is_some() || find_words(&t, &n).is_some() {
        "part of the name"
    } else {
        "words of the name"
    };
    let source = match (&node.name_from, node.is_clickable()) {
        (Some(from), _) => format!(" {from}"),
        (None, true) => " text of a clickable element".to_string(),
        (None, false) => String::new(),
    };
    format!(
        "{} {:?} (matched: {target:?} ≈{source} {:?}, {how})",
        node.role, node.name, node.name
    )
}

fn on(node: &SnapshotNode, action: ActionKind, text: Option<String>) -> Action {
    Action {
        action,
        args: ActionArgs {
            role: Some(node.role.clone()),
            name: Some(node.name.clone()),
            reference: node.reference.clone(),
            text,
            ..ActionArgs::default()
        },
    }
}

fn decision(action: Action, confidence: f64, message: String) -> Result<Decision, ToolError> {
    Ok(Decision {
        action,
        confidence: (confidence * 100.0).round() / 100.0,
        message,
    })
}

/// A URL in the step: absolute, a bare domain, or a path (resolved against
/// the current page).
fn url_in(step: &str, current: &str) -> Option<String> {
    for token in step.split_whitespace() {
        let t = token
            .trim_matches(|c: char| "'\"“”‘’(),;".contains(c))
            .trim_end_matches('.');
        if t.contains("://") || t.starts_with("about:") {
            return Some(t.to_string());
        }
        if t.starts_with('/') && t.len() > 1 {
            return url::Url::parse(current)
                .ok()?
                .join(t)
                .ok()
                .map(|u| u.to_string());
        }
        let domain = t.split('/').next().unwrap_or_default();
        let parts: Vec<&str> = domain.split('.').collect();
        if parts.len() >= 2
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
            && parts
                .last()
                .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
        {
            return Some(format!("https://{t}"));
        }
    }
    None
}

pub(crate) fn decide(input: &StepInput) -> Result<Decision, ToolError> {
    let step = input.plan_step.trim();
    let lower = step.to_lowercase();
    let quotes = quoted(step);
    let nodes = &input.snapshot.nodes;
    // A dialog in front of the page: the step answers it, or nothing can go on.
    if let Some(dialog) = &input.dialog {
        return browser::answer_dialog(dialog, step);
    }
    beyond_the_tools(&lower)?;
    // Waiting and keys first: "press Enter" is a key, "wait 2 seconds" a wait.
    if let Some(at) = find_words(&lower, "wait") {
        return wait(&lower[at..]);
    }
    // "Submit the form by clicking the button": the means is the action.
    let lower_ascii = step.to_ascii_lowercase();
    if let Some(at) = [
        "by clicking",
        "by pressing",
        "by tapping",
        "by selecting",
        "by choosing",
    ]
    .iter()
    .filter_map(|w| find_words(&lower_ascii, w))
    .min()
    {
        let means = StepInput {
            plan_step: step[at + 3..].to_string(),
            ..input.clone()
        };
        return decide(&means);
    }
    if let Some(tabs) = browser::tab_step(input, step) {
        return tabs;
    }
    if pointer::uploads(&lower) {
        return pointer::upload(nodes, step);
    }
    if pointer::drags(&lower) {
        return pointer::drag(nodes, step);
    }
    if let Some(at) = pointer::hover_at(&lower) {
        return pointer::hover(nodes, step, at);
    }
    if let Some(history) = browser::history_step(nodes, &lower) {
        return history;
    }
    // The step without its quoted strings, lowercased (quotes keep their case).
    let unq = unquoted(step, &quotes).to_lowercase();
    if let Some(pressed) = press(&lower, &unq, &quotes) {
        return pressed;
    }

    // The earliest verb decides.
    let found = VERBS
        .iter()
        .filter_map(|(word, verb)| find_words(&unq, word).map(|at| (at, *word, *verb)))
        .min_by_key(|(at, word, _)| (*at, usize::MAX - word.len()));
    let Some((_, word, verb)) = found else {
        // No verb ("Send the feedback", "Month view", "Item 13"): the step
        // names what to press, when one element's name fits it well.
        let no_action = || {
            fail(
                "ambiguous_step",
                format!(
                    "no action in {step:?}: say what to do (click, type, select, search, scroll, go to, press, wait)"
                ),
            )
        };
        return match click(nodes, &quotes, step, "", role_hint(&unq)) {
            Ok(d) if d.confidence >= 0.5 => Ok(d),
            _ => Err(no_action()),
        };
    };
    let hint = role_hint(&unq);
    match verb {
        Verb::Close => close(nodes, &quotes, step, word),
        Verb::Set => set(nodes, &quotes, step, word),
        Verb::Navigate => navigate(nodes, &quotes, step, word, hint, &input.url),
        Verb::Search => search(&quotes, &unq, word),
        Verb::Type => type_into(nodes, &quotes, step, &unq, word),
        Verb::Select => select(nodes, &quotes, step, &unq, word, hint),
        Verb::Check => click(
            nodes,
            &quotes,
            step,
            word,
            Some(&["checkbox", "switch", "radio"]),
        ),
        Verb::Click => click_verb(nodes, &quotes, step, word, hint),
        Verb::Scroll => scroll(&unq),
    }
}

/// Things no browser action can do: `tool_limit`.
fn beyond_the_tools(lower: &str) -> Result<(), ToolError> {
    let limits = ["captcha", "print"];
    match limits.iter().find(|w| find_words(lower, w).is_some()) {
        Some(what) => Err(fail(
            "tool_limit",
            format!(
                "no browser action can {what}: the tools navigate, click, type, search, scroll, press keys, wait, select, hover, drag, upload, go back and forward, answer dialogs and switch tabs"
            ),
        )),
        None => Ok(()),
    }
}

/// "Wait 2 seconds" (`from_wait` starts at the word): one second when no time is
/// given; more than 60 s is `tool_limit`.
fn wait(from_wait: &str) -> Result<Decision, ToolError> {
    let seconds = seconds_in(from_wait).unwrap_or(1.0);
    if seconds > 60.0 {
        return Err(fail(
            "tool_limit",
            format!("waiting {seconds} s is longer than browser_act waits (60 s)"),
        ));
    }
    decision(
        Action {
            action: ActionKind::Wait,
            args: ActionArgs {
                seconds: Some(seconds),
                ..ActionArgs::default()
            },
        },
        0.9,
        format!("Wait {seconds} s"),
    )
}

/// "Press Enter", "hit Tab": a key, unless the step names an element to press
/// ("press the Save button" is a click). `None` when it is not a key press.
fn press(lower: &str, unq: &str, quotes: &[String]) -> Option<Result<Decision, ToolError>> {
    let names_element = ["button", "link", "checkbox", "field"]
        .iter()
        .any(|w| find_words(unq, w).is_some());
    let presses = ["press", "hit", "push"]
        .iter()
        .any(|w| find_words(lower, w).is_some());
    if !presses || names_element {
        return None;
    }
    let key = KEYS
        .iter()
        .filter_map(|(word, key)| find_words(unq, word).map(|at| (at, *key)))
        .min_by_key(|(at, _)| *at)
        .map(|(_, key)| key.to_string())
        .or_else(|| quotes.first().filter(|q| q.chars().count() == 1).cloned())?;
    Some(decision(
        Action {
            action: ActionKind::PressKey,
            args: ActionArgs {
                key: Some(key.clone()),
                ..ActionArgs::default()
            },
        },
        0.9,
        format!("Press {key}"),
    ))
}

/// "Go to example.com": navigate; "open the Settings page": a link, most likely.
fn navigate(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    word: &str,
    hint: Option<&[&str]>,
    page_url: &str,
) -> Result<Decision, ToolError> {
    if let Some(url) = url_in(step, page_url) {
        return decision(
            Action {
                action: ActionKind::Navigate,
                args: ActionArgs {
                    url: Some(url.clone()),
                    ..ActionArgs::default()
                },
            },
            0.95,
            format!("Go to {url}"),
        );
    }
    click(
        nodes,
        quotes,
        step,
        word,
        hint.or(Some(&["link", "tab", "button"])),
    )
}

/// "Search for 'shoes'": the quoted query, else the words after the verb.
fn search(quotes: &[String], unq: &str, word: &str) -> Result<Decision, ToolError> {
    let query = quotes.first().cloned().or_else(|| {
        let at = find_words(unq, word)?;
        let rest = unq[at + word.len()..].trim().trim_end_matches('.').trim();
        (!rest.is_empty()).then(|| rest.to_string())
    });
    let Some(query) = query.filter(|q| !q.trim().is_empty()) else {
        return Err(fail(
            "ambiguous_step",
            "search for what? put the query in quotes",
        ));
    };
    decision(
        Action {
            action: ActionKind::Search,
            args: ActionArgs {
                text: Some(query.clone()),
                ..ActionArgs::default()
            },
        },
        if quotes.is_empty() { 0.7 } else { 0.9 },
        format!("Search for {query:?}"),
    )
}

/// A click verb. "Log in", "Submit" alone: the verb names the button.
fn click_verb(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    word: &str,
    hint: Option<&[&str]>,
) -> Result<Decision, ToolError> {
    if clicked_thing(quotes, step, word).is_empty()
        && matches!(word, "log in" | "sign in" | "submit")
    {
        let (node, score) = best(nodes, word, &CLICKABLE, Some(&["button", "link"]))?;
        return decision(
            on(node, ActionKind::Click, None),
            score,
            format!("Click {}", matched(word, node)),
        );
    }
    click(nodes, quotes, step, word, hint)
}

/// "Scroll down", "scroll to the bottom": a direction or an end of the page.
fn scroll(unq: &str) -> Result<Decision, ToolError> {
    let (direction, to) = if find_words(unq, "bottom").is_some() || find_words(unq, "end").is_some()
    {
        (None, Some("bottom"))
    } else if find_words(unq, "top").is_some() {
        (None, Some("top"))
    } else if find_words(unq, "up").is_some() {
        (Some("up"), None)
    } else {
        (Some("down"), None)
    };
    let said = match (direction, to) {
        (Some(direction), _) => direction,
        (None, Some("top")) => "to the top",
        (None, _) => "to the bottom",
    };
    decision(
        Action {
            action: ActionKind::Scroll,
            args: ActionArgs {
                direction: direction.map(str::to_string),
                to: to.map(str::to_string),
                ..ActionArgs::default()
            },
        },
        0.9,
        format!("Scroll {said}"),
    )
}

fn seconds_in(text: &str) -> Option<f64> {
    let words: Vec<&str> = text.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let (num, unit) = match w.find(|c: char| !c.is_ascii_digit() && c != '.') {
            Some(at) if at > 0 => (&w[..at], &w[at..]),
            None => (*w, words.get(i + 1).copied().unwrap_or("s")),
            _ => continue,
        };
        if let Ok(n) = num.parse::<f64>() {
            let unit = unit.trim_matches(|c: char| !c.is_alphanumeric());
            return Some(match unit {
                "ms" | "millisecond" | "milliseconds" => n / 1000.0,
                "m" | "min" | "minute" | "minutes" => n * 60.0,
                _ => n,
            });
        }
    }
    None
}

/// What a click step names: its first quoted string, else its words minus the
/// verb and filler (empty when it names nothing).
fn clicked_thing(quotes: &[String], step: &str, verb: &str) -> String {
    quotes
        .first()
        .cloned()
        .unwrap_or_else(|| target_words(&unquoted(step, quotes), verb))
}

/// Ordinal words and the position they name (1-based; 0 is "last").
const ORDINALS: [(&str, usize); 23] = [
    ("first", 1),
    ("1st", 1),
    ("second", 2),
    ("2nd", 2),
    ("third", 3),
    ("3rd", 3),
    ("fourth", 4),
    ("4th", 4),
    ("fifth", 5),
    ("5th", 5),
    ("sixth", 6),
    ("6th", 6),
    ("seventh", 7),
    ("7th", 7),
    ("eighth", 8),
    ("8th", 8),
    ("ninth", 9),
    ("9th", 9),
    ("tenth", 10),
    ("10th", 10),
    ("last", 0),
    ("final", 0),
    ("only", 1),
];

/// "3" or "three" (up to ten).
fn number(word: &str) -> Option<usize> {
    const WORDS: [&str; 10] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    word.parse()
        .ok()
        .or_else(|| WORDS.iter().position(|w| *w == word).map(|i| i + 1))
}

/// An element picked by position or by role alone, generally (no page
/// knowledge): "the second link", "the 4th input", "link number 2", "Save #2",
/// "the last item" pick in document order among the elements of the role the
/// step names (and of its other words' name, when it has some: "the second
/// Save button"); "the button", "the text box" pick the one element of that
/// role when the page has exactly one. `None` when the step says neither.
fn by_position<'a>(
    nodes: &'a [SnapshotNode],
    target: &str,
    roles: &[&str],
    hint: Option<&[&str]>,
) -> Option<(&'a SnapshotNode, String)> {
    let lower = norm(target);
    let words: Vec<&str> = lower.split_whitespace().collect();
    let mut position = None;
    let mut ordinal_word = None;
    let mut rest: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if let Some((o, n)) = ORDINALS.iter().find(|(o, _)| *o == w) {
            position = Some(*n);
            ordinal_word = Some(*o);
        } else if let Some(n) = w.strip_prefix('#').and_then(|d| d.parse::<usize>().ok()) {
            position = Some(n);
        } else if w == "number"
            && let Some(n) = words.get(i + 1).and_then(|d| number(d))
        {
            position = Some(n);
            i += 1;
        } else if let Some(n) = number(w).filter(|_| {
            // "tab 3": a number after a role word, unless it is a name
            // on the page ("Item 37").
            i > 0
                && ROLE_WORDS.iter().any(|(r, _)| *r == words[i - 1])
                && !nodes
                    .iter()
                    .any(|n| find_words(&norm(&n.name), &format!("{} {w}", words[i - 1])).is_some())
        }) {
            position = Some(n);
        } else if !FILLER.contains(&w) && !JOINERS.contains(&w) {
            rest.push(w);
        }
        i += 1;
    }
    let hinted = hint.filter(|h| h.iter().any(|r| roles.contains(r)));
    let of_role = |n: &&SnapshotNode| {
        is_candidate(n, roles) && hinted.is_none_or(|h| h.contains(&n.role.as_str()))
    };
    // "the Last name field" names a field; it is not the last one.
    if let Some(word) = ordinal_word
        && nodes
            .iter()
            .filter(of_role)
            .any(|n| find_words(&norm(&n.name), word).is_some())
    {
        return None;
    }
    let named = rest.join(" ");
    let candidates: Vec<&SnapshotNode> = nodes
        .iter()
        .filter(of_role)
        .filter(|n| named.is_empty() || similarity(&named, &n.name) >= NOT_FOUND)
        .collect();
    let pick = match position {
        Some(0) => candidates.last().copied(),
        Some(n) => candidates.get(n.checked_sub(1)?).copied(),
        // Role alone: only when it names one element.
        None if named.is_empty() && hinted.is_some() && candidates.len() == 1 => {
            candidates.first().copied()
        }
        None => None,
    }?;
    let how = match position {
        Some(0) => "the last".to_string(),
        Some(n) => format!("number {n}"),
        None => "the only one".to_string(),
    };
    Some((pick, format!("{how} of {} {}", candidates.len(), pick.role)))
}

/// Words that name a container, and its roles.
const CONTAINER_WORDS: [(&str, &[&str]); 12] = [
    ("frame", &["iframe"]),
    ("iframe", &["iframe"]),
    ("dialog", &["dialog", "alertdialog"]),
    ("popup", &["dialog", "alertdialog"]),
    ("modal", &["dialog", "alertdialog"]),
    ("navbar", &["navigation"]),
    ("navigation", &["navigation"]),
    ("menu bar", &["navigation", "menubar"]),
    ("form", &["form"]),
    ("header", &["banner"]),
    ("footer", &["contentinfo"]),
    ("table", &["table"]),
];

/// "… in the frame", "… inside the Cookies dialog", "… within the navbar":
/// the one container the words name (by its kind or its name), and the step
/// without them. `None` when the step names no container on the page.
fn container<'a>(nodes: &'a [SnapshotNode], step: &str) -> Option<(Vec<SnapshotNode>, String)> {
    let lower = step.to_ascii_lowercase();
    let (at, len) = ["inside", "within", "in"]
        .iter()
        .filter_map(|w| find_words(&lower, w).map(|at| (at, w.len())))
        .max()?;
    let phrase = norm(&lower[at + len..]);
    let roles: Vec<&str> = CONTAINER_WORDS
        .iter()
        .filter(|(w, _)| find_words(&phrase, w).is_some())
        .flat_map(|(_, roles)| roles.iter().copied())
        .collect();
    let kinds: Vec<&'a SnapshotNode> = nodes
        .iter()
        .filter(|n| {
            roles.contains(&n.role.as_str())
                || (CONTAINER_WORDS
                    .iter()
                    .any(|(_, r)| r.contains(&n.role.as_str()))
                    && !n.name.is_empty()
                    && similarity(&phrase, &n.name) >= 0.6)
        })
        .collect();
    let [one] = kinds.as_slice() else {
        return None;
    };
    Some((below(nodes, one).to_vec(), step[..at].to_string()))
}

fn click(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    verb: &str,
    hint: Option<&[&str]>,
) -> Result<Decision, ToolError> {
    // A step that says where ("the button in the frame") looks there first.
    if let Some((inside, rest)) = container(nodes, step)
        && let Ok(d) = click_among(&inside, quotes, &rest, verb, hint)
    {
        return Ok(d);
    }
    click_among(nodes, quotes, step, verb, hint)
}

fn click_among(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    verb: &str,
    hint: Option<&[&str]>,
) -> Result<Decision, ToolError> {
    let target = clicked_thing(quotes, step, verb);
    // By position or role: the quoted name (if any), the other words and the
    // role words; a quoted name alone is left to the name match below.
    let words = target_words(&unquoted(step, quotes), verb);
    let positional = format!("{} {words} {}", quotes.join(" "), role_words(step));
    let hint_here = hint.or(role_hint(&norm(step)));
    let picked = if quotes.is_empty() || has_ordinal(&words) {
        by_position(nodes, &positional, &CLICKABLE, hint_here)
    } else {
        None
    };
    if let Some((node, how)) = picked {
        return decision(
            on(node, ActionKind::Click, None),
            0.75,
            format!("Click {} {:?} ({how})", node.role, node.name),
        );
    }
    if target.is_empty() {
        return Err(fail(
            "ambiguous_step",
            format!("{verb} what? name the element in {step:?}"),
        ));
    }
    let (node, score) = match best(nodes, &target, &CLICKABLE, hint) {
        Ok(found) => found,
        Err(e) => {
            // "Press the submit button" on a page with one button: no name
            // fits, but the role the step names has one element.
            let named_role = role_hint(&norm(step));
            let lone: Vec<&SnapshotNode> = nodes
                .iter()
                .filter(|n| {
                    n.reference.is_some()
                        && named_role.is_some_and(|r| r.contains(&n.role.as_str()))
                })
                .collect();
            match lone.as_slice() {
                [only] => (*only, 0.5),
                _ => return Err(e),
            }
        }
    };
    decision(
        on(node, ActionKind::Click, None),
        score,
        format!("Click {}", matched(&target, node)),
    )
}

/// Names of the buttons that close what they sit in.
const CLOSERS: [&str; 7] = [
    "close",
    "dismiss",
    "x",
    "no thanks",
    "got it",
    "close dialog",
    "close modal",
];

/// "Close the dialog", "Dismiss the cookie banner", "Close it": the page's
/// close button (named "Close", "×", "Dismiss", …) when it has one, or the
/// named element when the step names something else to close ("Close the
/// Shipping section"); with neither, Escape (what closes most dialogs).
fn close(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    verb: &str,
) -> Result<Decision, ToolError> {
    let closers: Vec<&SnapshotNode> = nodes
        .iter()
        .filter(|n| is_candidate(n, &["button", "link"]))
        .filter(|n| {
            let name = norm(&n.name);
            CLOSERS.contains(&name.as_str())
                || name
                    .split(' ')
                    .next()
                    .is_some_and(|w| w == "close" || w == "dismiss")
        })
        .collect();
    match closers.as_slice() {
        [one] => {
            return decision(
                on(one, ActionKind::Click, None),
                0.8,
                format!("Click {} {:?} (closes)", one.role, one.name),
            );
        }
        [first, ..]
            if nodes
                .iter()
                .any(|n| n.role == "dialog" || n.role == "alertdialog") =>
        {
            // Several: the first close button after the page's dialog.
            let dialog_at = nodes
                .iter()
                .position(|n| n.role == "dialog" || n.role == "alertdialog");
            let first_in = dialog_at.and_then(|at| {
                closers.iter().copied().find(|c| {
                    nodes
                        .iter()
                        .position(|n| std::ptr::eq(n, *c))
                        .is_some_and(|p| p > at)
                })
            });
            let pick = first_in.unwrap_or(first);
            return decision(
                on(pick, ActionKind::Click, None),
                0.6,
                format!("Click {} {:?} (closes the dialog)", pick.role, pick.name),
            );
        }
        _ => {}
    }
    let what = clicked_thing(quotes, step, verb);
    let dialog_words = [
        "dialog", "popup", "pop-up", "modal", "banner", "window", "overlay", "cookie", "cookies",
        "notice", "message", "it",
    ];
    let named = what.split_whitespace().any(|w| !dialog_words.contains(&w));
    if named && let Ok(d) = click(nodes, quotes, step, verb, None) {
        return Ok(d);
    }
    decision(
        Action {
            action: ActionKind::PressKey,
            args: ActionArgs {
                key: Some("Escape".into()),
                ..ActionArgs::default()
            },
        },
        0.5,
        "Press Escape (no close button on the page)".into(),
    )
}

/// "Set the country to Germany", "Change the date of birth to 1990-05-17":
/// a list takes the value as a selection, a field as typed text.
fn set(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    verb: &str,
) -> Result<Decision, ToolError> {
    let lower = step.to_ascii_lowercase();
    let (field, value) = match (quotes.first(), find_words(&lower, "to")) {
        (Some(q), _) => (target_words(&unquoted(step, quotes), verb), q.clone()),
        (None, Some(at)) => (
            target_words(&lower[..at], verb),
            step[at + 2..].trim().trim_end_matches('.').to_string(),
        ),
        (None, None) => {
            return Err(fail(
                "ambiguous_step",
                format!("set what to what? say \"set <field> to <value>\" in {step:?}"),
            ));
        }
    };
    let mut roles: Vec<&str> = EDITABLE.to_vec();
    roles.extend(["listbox", "slider", "checkbox", "switch"]);
    let (node, score) = best(nodes, &field, &roles, None)?;
    let (kind, said) = match node.role.as_str() {
        "combobox" | "listbox" => (ActionKind::Select, "Select"),
        "checkbox" | "switch" => (ActionKind::Click, "Click"),
        _ => (ActionKind::Type, "Type into"),
    };
    let text = (kind != ActionKind::Click).then(|| value.clone());
    decision(
        on(node, kind, text),
        score,
        format!("{said} {} {:?} ({value:?})", node.role, node.name),
    )
}

/// "Type 'ada' into the Username field", "Enter 'x' as the password", "Fill in
/// Email with 'a@b.c'".
fn type_into(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    unq: &str,
    verb: &str,
) -> Result<Decision, ToolError> {
    // ASCII lowercasing keeps byte offsets, so `lower`'s positions index `step`.
    let lower = step.to_ascii_lowercase();
    let (text, field) = match quotes {
        // "Type 'ada' into 'User name'", "Fill 'Email' with 'a@b.c'": the
        // quote after "with" is the text, the one after "into"/"in" the field.
        [first, second, ..] => {
            let with = find_words(&lower, "with");
            let second_at = lower.rfind(&second.to_ascii_lowercase()).unwrap_or(0);
            if with.is_some_and(|w| w < second_at) {
                (second.clone(), first.clone())
            } else {
                (first.clone(), second.clone())
            }
        }
        [text] => (text.clone(), target_words(unq, verb)),
        [] => match find_words(&lower, "with") {
            // "Fill in email with ada@example.com": the value follows "with".
            Some(at) => {
                let value = step[at + 4..].trim().trim_end_matches('.').to_string();
                (value, target_words(&lower[..at], verb))
            }
            // "Type a@b.io into the email field", "Enter ada as the user
            // name": the value is between the verb and the joiner.
            None => {
                let from = find_words(&lower, verb).map_or(0, |at| at + verb.len());
                let split = ["into", "in", "as", "on", "for"]
                    .iter()
                    .filter_map(|w| find_words(&lower[from..], w).map(|at| (from + at, w.len())))
                    .min();
                let Some((at, len)) = split else {
                    // "Enter the phone number 555-0100": a field's name, then
                    // the value.
                    return field_then_value(nodes, step, from, verb);
                };
                let value = step[from..at].trim().to_string();
                if value.is_empty() {
                    return Err(fail("ambiguous_step", "type what? put the text in quotes"));
                }
                (value, target_words(&lower[at + len..], ""))
            }
        },
    };
    let editable: Vec<&SnapshotNode> = nodes
        .iter()
        .filter(|n| EDITABLE.contains(&n.role.as_str()))
        .collect();
    if let Some((node, how)) = by_position(nodes, &field, &EDITABLE, Some(&EDITABLE)) {
        return decision(
            on(node, ActionKind::Type, Some(text)),
            0.75,
            format!("Type into {} {:?} ({how})", node.role, node.name),
        );
    }
    if field.is_empty() {
        // No field named: the only one on the page, else the focused one.
        if let [only] = editable.as_slice() {
            return decision(
                on(only, ActionKind::Type, Some(text)),
                0.7,
                format!("Type into {} {:?}", only.role, only.name),
            );
        }
        return decision(
            Action {
                action: ActionKind::Type,
                args: ActionArgs {
                    text: Some(text),
                    ..ActionArgs::default()
                },
            },
            0.5,
            "Type into the focused element".into(),
        );
    }
    let (node, score) = match (best(nodes, &field, &EDITABLE, None), editable.as_slice()) {
        (Ok(found), _) => found,
        // The page has one field: it is the one the step means.
        (Err(_), [only]) => (*only, 0.5),
        (Err(e), _) => return Err(e),
    };
    decision(
        on(node, ActionKind::Type, Some(text)),
        score,
        format!("Type into {}", matched(&field, node)),
    )
}

/// The nodes below `list` in the tree (its options, for a list).
fn below<'a>(nodes: &'a [SnapshotNode], list: &SnapshotNode) -> &'a [SnapshotNode] {
    let Some(at) = nodes.iter().position(|n| std::ptr::eq(n, list)) else {
        return &[];
    };
    let end = nodes[at + 1..]
        .iter()
        .position(|n| n.depth <= list.depth)
        .map_or(nodes.len(), |p| at + 1 + p);
    &nodes[at + 1..end]
}

/// "Red and Blue", "red, green & blue" → each value; "only Green" → Green.
fn split_values(option: &str) -> Vec<String> {
    let mut text = format!(" {option} ");
    for sep in [",", " and ", " & ", " plus "] {
        text = text.replace(sep, "\u{1f}");
    }
    text.split('\u{1f}')
        .map(|v| {
            let v = v.trim();
            let v = v.strip_prefix("only ").unwrap_or(v);
            let v = v.strip_prefix("both ").unwrap_or(v);
            v.trim().to_string()
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// What a select step can click instead of selecting in a list: checkboxes,
/// radios, tabs, options of an open list, menu items, and elements acting as
/// controls (a list item with a click handler).
const CHECKABLE: [&str; 9] = [
    "checkbox",
    "radio",
    "option",
    "tab",
    "switch",
    "menuitem",
    "menuitemradio",
    "menuitemcheckbox",
    "treeitem",
];

/// "Enter the phone number 555-0100", "Type the user name ada": the longest
/// run of words after the verb that names a field well, and the rest as the
/// text.
fn field_then_value(
    nodes: &[SnapshotNode],
    step: &str,
    from: usize,
    verb: &str,
) -> Result<Decision, ToolError> {
    let rest = step[from..].trim().trim_end_matches('.');
    let words: Vec<&str> = rest.split_whitespace().collect();
    for k in (1..words.len()).rev() {
        let field = target_words(&words[..k].join(" "), "");
        if field.is_empty() {
            continue;
        }
        if let Ok((node, score)) = best(nodes, &field, &EDITABLE, None)
            && score >= 0.6
        {
            let text = words[k..].join(" ");
            return decision(
                on(node, ActionKind::Type, Some(text)),
                score * 0.9,
                format!("Type into {}", matched(&field, node)),
            );
        }
    }
    Err(fail(
        "ambiguous_step",
        format!("{verb} what where? put the text in quotes in {step:?}"),
    ))
}

/// "Select 'Green' from the Colour dropdown", "Choose Germany in Country",
/// "Select Red and Blue in the colours list", or "Select the 'Remember me'
/// checkbox", "Pick express shipping", "Choose pears" (a click on what has
/// that name). A drop-down (`combobox`) takes the value as a selection; a
/// list box shows its options, so one value is a click on that option and
/// several are one selection.
fn select(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    unq: &str,
    verb: &str,
    hint: Option<&[&str]>,
) -> Result<Decision, ToolError> {
    let lower = step.to_lowercase();
    let lists: Vec<&SnapshotNode> = nodes
        .iter()
        .filter(|n| n.role == "combobox" || n.role == "listbox")
        .filter(|n| n.reference.is_some())
        .collect();
    let (mut option, mut field) = match quotes {
        [one] => (one.clone(), target_words(unq, verb)),
        // "Select 'Germany' from 'Country'": the last quote names the list
        // when a joiner comes before it; else all are values.
        [.., last]
            if ["from", "in", "on"].iter().any(|w| {
                find_words(&lower, w).is_some_and(|at| lower[at..].contains(&last.to_lowercase()))
            }) =>
        {
            (quotes[..quotes.len() - 1].join(", "), last.clone())
        }
        [_, ..] => (quotes.join(", "), target_words(unq, verb)),
        [] => {
            let split = ["from", "in", "as", "for", "on"]
                .iter()
                .filter_map(|w| find_words(&lower, w).map(|at| (at, w.len())))
                .min();
            match split {
                Some((at, len)) => (
                    target_words(&lower[..at], verb),
                    target_words(&lower[at + len..], ""),
                ),
                None => (target_words(&lower, verb), String::new()),
            }
        }
    };
    // "Choose the colours red and blue": the list named first.
    if field.is_empty() {
        for list in &lists {
            let name = norm(&list.name);
            if !name.is_empty()
                && let Some(rest) = option.strip_prefix(&format!("{name} "))
            {
                option = rest.to_string();
                field = name;
                break;
            }
        }
    }
    let values = split_values(&option);
    let mut click_roles = CHECKABLE.to_vec();
    click_roles.push("button");
    let wants_click = hint.is_some_and(|h| {
        h.iter()
            .any(|r| ["checkbox", "radio", "tab", "listitem", "treeitem"].contains(r))
    });
    let list_named = if field.is_empty() {
        None
    } else {
        best(nodes, &field, &["combobox", "listbox"], None).ok()
    };
    if values.len() <= 1 && (list_named.is_none() || wants_click) {
        // Options of a drop-down are chosen by selecting, not by a click.
        let in_dropdown: std::collections::HashSet<&str> = lists
            .iter()
            .filter(|l| l.role == "combobox")
            .flat_map(|l| below(nodes, l))
            .filter_map(|n| n.reference.as_deref())
            .collect();
        let clickable: Vec<SnapshotNode> = nodes
            .iter()
            .filter(|n| {
                n.reference
                    .as_deref()
                    .is_none_or(|r| !in_dropdown.contains(r))
            })
            .cloned()
            .collect();
        if let Ok((node, score)) = best(&clickable, &option, &click_roles, hint)
            && (score >= 0.6 || lists.is_empty() || wants_click)
        {
            return decision(
                on(node, ActionKind::Click, None),
                score,
                format!("Click {}", matched(&option, node)),
            );
        }
        if lists.is_empty() {
            return Err(fail(
                "element_not_found",
                format!("nothing on the page to select {option:?} in"),
            ));
        }
    }
    // The list: the one named; else the one with an option of that value;
    // else the page's only list.
    let has_value = |l: &&SnapshotNode| {
        below(nodes, l)
            .iter()
            .any(|o| o.role == "option" && values.iter().any(|v| similarity(v, &o.name) >= 0.9))
    };
    let list = match list_named {
        Some((list, _)) => list,
        None => match (lists.iter().copied().find(has_value), lists.as_slice()) {
            (Some(list), _) => list,
            (None, [only]) => *only,
            (None, _) => {
                let what = if field.is_empty() { &option } else { &field };
                best(nodes, what, &["combobox", "listbox"], None)?.0
            }
        },
    };
    // A list box shows its options: one value is a click on it.
    if list.role == "listbox"
        && let [value] = values.as_slice()
        && let Ok((opt, score)) = best(below(nodes, list), value, &["option"], None)
    {
        return decision(
            on(opt, ActionKind::Click, None),
            score,
            format!("Click option {:?} in {:?}", opt.name, list.name),
        );
    }
    let mut action = on(list, ActionKind::Select, None);
    match values.as_slice() {
        [one] => action.args.text = Some(one.clone()),
        many => action.args.values = Some(many.to_vec()),
    }
    decision(
        action,
        0.85,
        format!(
            "Select {} in {} {:?}",
            values.join(", "),
            list.role,
            list.name
        ),
    )
}

mod browser;
mod pointer;
#[cfg(test)]
mod tests;
