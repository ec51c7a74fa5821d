//! Steps that hold several actions ("Select Double and click Book", "Click
//! ONE, wait 1 seconds, then click TWO"). One `browser_act` call is one
//! action, so such a step is never half done: the earliest verb alone used
//! to act (a click, with the typing dropped) and report success. Two pairs
//! are one action in the tools' own terms and are done as one: typing then
//! pressing Enter is `browser_type` with `submit`, and clicking into a field
//! then typing is typing into that field. Anything else is refused with the
//! steps it holds (`error.steps`), to give one at a time
//! (docs/browser-act.md, "Compound steps").

use axon_core::error::MAX_STEPS;

use super::several::several;
use super::*;

/// The verbs that start a further action after "and", "then" or a comma:
/// not "and Blue", "and French" (a second value of one selection).
const SECOND_VERBS: [&str; 26] = [
    "click", "tap", "press", "hit", "type", "enter", "select", "choose", "pick", "check", "tick",
    "uncheck", "submit", "open", "go", "navigate", "scroll", "search", "wait", "fill", "close",
    "set", "find", "expand", "collapse", "push",
];

/// What joins two actions, longest first where one holds another.
const JOINS: [&str; 6] = [
    ", and then ",
    " and then ",
    ", then ",
    " then ",
    " and ",
    ", ",
];

/// Words that only announce the next action ("then find and click the
/// link"): a part that is nothing else is no action.
const LEAD_INS: [&str; 2] = ["find", "locate"];

/// The step's actions, when it holds more than one: the text between the
/// joins (quoted text is never split), in order.
fn split(step: &str, quotes: &[String]) -> Option<Vec<String>> {
    let masked = masked(step, quotes).to_ascii_lowercase();
    let mut cuts: Vec<(usize, usize)> = JOINS
        .iter()
        .flat_map(|j| masked.match_indices(j).map(|(at, _)| (at, j.len())))
        .filter(|(at, len)| {
            let next = masked[at + len..]
                .split_whitespace()
                .next()
                .unwrap_or_default();
            SECOND_VERBS.contains(&next.trim_matches(|c: char| !c.is_alphanumeric()))
        })
        .collect();
    cuts.sort_by_key(|(at, len)| (*at, std::cmp::Reverse(*len)));
    let first_cut = cuts.first()?.0;
    // The first part must be an action too ("Salt and pepper" is a name).
    if !VERBS
        .iter()
        .any(|(w, _)| find_words(&masked[..first_cut], w).is_some())
    {
        return None;
    }
    let mut parts = Vec::new();
    let mut from = 0;
    for (at, len) in cuts {
        // A join inside one already cut (" then " in ", then ").
        if at < from {
            continue;
        }
        parts.push(&step[from..at]);
        from = at + len;
    }
    parts.push(&step[from..]);
    let parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim().trim_end_matches(',').trim().to_string())
        .filter(|p| !p.is_empty() && !LEAD_INS.contains(&p.to_ascii_lowercase().as_str()))
        .collect();
    (parts.len() > 1).then_some(parts)
}

/// A step of several actions: decided as one when the tools do both in one
/// call, else refused naming them (`error.steps`). `None` when the step
/// holds one action.
pub(super) fn compound(input: &StepInput, step: &str) -> Option<Result<Decision, ToolError>> {
    let quotes = quoted(step);
    let split = split(step, &quotes);
    let was_split = split.is_some();
    // Each part may name several targets of one verb ("into both fields",
    // "Select A, B and C" over checkboxes): those are actions too.
    let parts: Vec<String> = split
        .unwrap_or_else(|| vec![step.to_string()])
        .into_iter()
        .flat_map(|part| several(input, &part).unwrap_or_else(|| vec![part]))
        .collect();
    if parts.len() < 2 {
        return None;
    }
    if let [first, second] = parts.as_slice()
        && was_split
        && let Some(done) = one_call(input, first, second)
    {
        return Some(Ok(done));
    }
    let n = parts.len();
    if n > MAX_STEPS {
        return Some(Err(fail(
            "ambiguous_step",
            format!("{step:?} holds {n} actions; give them one at a time"),
        )));
    }
    let list: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{}. {p:?}", i + 1))
        .collect();
    Some(Err(fail(
        "ambiguous_step",
        format!(
            "{step:?} holds {n} actions; give them one at a time: {}",
            list.join(" ")
        ),
    )
    .with_steps(parts)))
}

/// Two actions the tools do in one call, decided as that call: typing then
/// pressing Enter (`type` with `key: Enter`), clicking into a field then
/// typing (typing into that field).
fn one_call(input: &StepInput, first: &str, second: &str) -> Option<Decision> {
    let second_lower = norm(second);
    let one_step = |text: String| StepInput {
        plan_step: text,
        ..input.clone()
    };
    // "Type 'Buy milk' into the box and press Enter": typed and submitted.
    let submits = [
        "press enter",
        "hit enter",
        "press return",
        "hit return",
        "submit",
        "submit it",
    ]
    .contains(&second_lower.as_str());
    if submits
        && let Ok(mut d) = decide(&one_step(first.to_string()))
        && d.action.action == ActionKind::Type
    {
        d.action.args.key = Some("Enter".into());
        d.message.push_str(" and press Enter");
        return Some(d);
    }
    // "Click into the text box and type 'Great app'": typed into that box.
    let first_lower = norm(first);
    let focuses = ["click", "tap", "focus"]
        .iter()
        .any(|v| first_lower.starts_with(v));
    let types = ["type", "enter", "write"]
        .iter()
        .any(|v| second_lower.starts_with(v));
    if focuses && types && find_words(&second_lower, "into").is_none() {
        let place = first
            .split_once(' ')
            .map(|(_, rest)| rest.trim())
            .map(|rest| {
                ["into ", "in ", "on "]
                    .iter()
                    .find_map(|p| rest.strip_prefix(p))
                    .unwrap_or(rest)
            })
            .unwrap_or_default();
        if let Ok(d) = decide(&one_step(format!("{second} into {place}")))
            && d.action.action == ActionKind::Type
        {
            return Some(d);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_are_found_outside_quotes_only() {
        let parts = |s: &str| split(s, &quoted(s));
        let v = |p: &[&str]| Some(p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            parts("Select Double and click Book"),
            v(&["Select Double", "click Book"])
        );
        assert_eq!(
            parts("Type 'a' then press Enter"),
            v(&["Type 'a'", "press Enter"])
        );
        assert_eq!(parts("Select Red and Blue in the colours list"), None);
        assert_eq!(parts("Click 'Save and close'"), None);
        assert_eq!(
            parts("Click 'Search and filter' and wait"),
            v(&["Click 'Search and filter'", "wait"])
        );
        assert_eq!(parts("Expand 'Shipping and delivery'"), None);
        // No action before the join: a name.
        assert_eq!(parts("Terms and check"), None);
        // Every join, not only the first "and" (MiniWoB++'s login-user).
        assert_eq!(
            parts("Enter the username 'u' and the password 'p' and press login."),
            v(&[
                "Enter the username 'u' and the password 'p'",
                "press login."
            ])
        );
        // Three actions, a comma among the joins (button-delay).
        assert_eq!(
            parts("Click button ONE, wait 1 seconds, then click button TWO."),
            v(&["Click button ONE", "wait 1 seconds", "click button TWO."])
        );
        // "then find and click" is the click (search-engine, click-menu-2).
        assert_eq!(
            parts("press 'Search', then find and click the 2nd search result."),
            v(&["press 'Search'", "click the 2nd search result."])
        );
        assert_eq!(
            parts("Click the 'Menu' button, and then find and click on the item labeled 'Prev'."),
            v(&[
                "Click the 'Menu' button",
                "click on the item labeled 'Prev'."
            ])
        );
        // A list of values is not a list of actions.
        assert_eq!(
            parts("Select A, B, and click Submit."),
            v(&["Select A, B", "click Submit."])
        );
    }
}
