//! Steps that hold two actions ("Select Double and click Book"). One
//! `browser_act` call is one action, so such a step is never half done: the
//! earliest verb alone used to act (a click, with the typing dropped) and
//! report success. Two pairs are one action in the tools' own terms and are
//! done as one: typing then pressing Enter is `browser_type` with `submit`,
//! and clicking into a field then typing is typing into that field. Any
//! other pair is refused with the two steps it holds, to give one at a time
//! (docs/browser-act.md, "Compound steps").

use super::*;

/// The verbs that start a second action after "and" / "then": not "and
/// Blue", "and French" (a second value of one selection).
const SECOND_VERBS: [&str; 22] = [
    "click", "tap", "press", "hit", "type", "enter", "select", "choose", "pick", "check", "tick",
    "uncheck", "submit", "open", "go", "navigate", "scroll", "search", "wait", "fill", "close",
    "set",
];

/// What joins two actions.
const JOINS: [&str; 5] = [", and then ", " and then ", ", then ", " then ", " and "];

/// The step's two actions, when it holds two: the text before and after
/// the join (quoted text is never split).
fn split(step: &str, quotes: &[String]) -> Option<(String, String)> {
    let masked = masked(step, quotes).to_ascii_lowercase();
    let (at, join) = JOINS
        .iter()
        .filter_map(|j| {
            let at = masked.find(j)?;
            let next = masked[at + j.len()..].split_whitespace().next()?;
            let next = next.trim_matches(|c: char| !c.is_alphanumeric());
            SECOND_VERBS.contains(&next).then_some((at, j.len()))
        })
        .min_by_key(|(at, _)| *at)?;
    let first = step[..at].trim().to_string();
    let second = step[at + join..].trim().to_string();
    // The first part must be an action too ("Salt and pepper" is a name).
    let first_lower = masked[..at].to_string();
    VERBS
        .iter()
        .any(|(w, _)| find_words(&first_lower, w).is_some())
        .then_some((first, second))
}

/// `step` with its quoted strings (and their quote marks) blanked, byte for
/// byte, so that positions in it are positions in `step`.
fn masked(step: &str, quotes: &[String]) -> String {
    let mut bytes = step.as_bytes().to_vec();
    for q in quotes {
        for (open, close) in QUOTE_MARKS {
            let quoted = format!("{open}{q}{close}");
            if let Some(at) = step.find(&quoted) {
                bytes[at..at + quoted.len()].fill(b'_');
            }
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|_| step.to_string())
}

/// A step of two actions: decided as one when the tools do both in one call,
/// else refused naming the two. `None` when the step holds one action.
pub(super) fn compound(input: &StepInput, step: &str) -> Option<Result<Decision, ToolError>> {
    let quotes = quoted(step);
    let (first, second) = split(step, &quotes)?;
    let second_lower = norm(&second);
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
        && let Ok(mut d) = decide(&one_step(first.clone()))
        && d.action.action == ActionKind::Type
    {
        d.action.args.key = Some("Enter".into());
        d.message.push_str(" and press Enter");
        return Some(Ok(d));
    }
    // "Click into the text box and type 'Great app'": typed into that box.
    let first_lower = norm(&first);
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
            return Some(Ok(d));
        }
    }
    Some(Err(fail(
        "ambiguous_step",
        format!("{step:?} holds two actions; give them as two steps: 1. {first:?} 2. {second:?}"),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_actions_are_found_outside_quotes_only() {
        let two = |s: &str| split(s, &quoted(s));
        assert_eq!(
            two("Select Double and click Book"),
            Some(("Select Double".into(), "click Book".into()))
        );
        assert_eq!(
            two("Type 'a' then press Enter"),
            Some(("Type 'a'".into(), "press Enter".into()))
        );
        assert_eq!(two("Select Red and Blue in the colours list"), None);
        assert_eq!(two("Click 'Save and close'"), None);
        assert_eq!(
            two("Click 'Search and filter' and wait"),
            Some(("Click 'Search and filter'".into(), "wait".into()))
        );
        assert_eq!(two("Expand 'Shipping and delivery'"), None);
        // No action before the join: a name.
        assert_eq!(two("Terms and check"), None);
    }
}
