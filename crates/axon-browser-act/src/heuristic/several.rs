//! One verb with several targets: "Enter the password 'x' into both
//! fields", "Select A, B and C" over a page of checkboxes, "Enter the
//! username 'u' and the password 'p'". Each is as many actions as targets;
//! a step that acted on the first alone and reported success was a wrong
//! action (MiniWoB++'s enter-password and login-user, docs/browser-act.md).
//! Read here into the steps they hold, which [`super::compound`] refuses
//! with, so that the caller gives them one at a time.

use super::words::masked;
use super::*;

/// The steps `step` holds when one verb names several targets, else `None`.
pub(super) fn several(input: &StepInput, step: &str) -> Option<Vec<String>> {
    let quotes = quoted(step);
    both(step, &quotes)
        .or_else(|| checkbox_list(&input.snapshot.nodes, step, &quotes))
        .or_else(|| values_by_label(step, &quotes))
}

/// "… into both text fields": the same action on the 1st and the 2nd.
fn both(step: &str, quotes: &[String]) -> Option<Vec<String>> {
    let lower = masked(step, quotes).to_ascii_lowercase();
    let at = find_words(&lower, "both")?;
    // The plural the kind ends on, within three words ("both text fields").
    let after = at + "both".len();
    let mut end = after;
    let mut kind = Vec::new();
    for word in lower[after..].split_whitespace().take(3) {
        end = lower[end..].find(word)? + end + word.len();
        let bare = word.trim_end_matches(|c: char| !c.is_alphanumeric());
        if let Some(one) = singular(bare) {
            kind.push(one);
            let tail = &step[end - (word.len() - bare.len())..];
            let kind = kind.join(" ");
            let with = |nth: &str| format!("{}the {nth} {kind}{tail}", &step[..at]);
            return Some(vec![with("1st"), with("2nd")]);
        }
        kind.push(bare.to_string());
    }
    None
}

/// A plural's singular ("fields" → "field", "boxes" → "box"), or `None`
/// when the word is no plural.
fn singular(word: &str) -> Option<String> {
    if word.len() < 4 || !word.ends_with('s') || word.ends_with("ss") {
        return None;
    }
    let one = if word.ends_with("xes") {
        &word[..word.len() - 2]
    } else {
        &word[..word.len() - 1]
    };
    Some(one.to_string())
}

/// "Select A, B and C" where each of A, B, C is a checkbox's name: one
/// check each. A multi-select list takes the values in one action, so this
/// reads only names that are checkboxes (or switches) on the page.
fn checkbox_list(nodes: &[SnapshotNode], step: &str, quotes: &[String]) -> Option<Vec<String>> {
    let lower = step.to_ascii_lowercase();
    let verb = ["select ", "check ", "tick ", "choose ", "pick "]
        .iter()
        .find(|v| lower.starts_with(*v))?;
    let list = step[verb.len()..].trim().trim_end_matches('.');
    let items: Vec<&str> = list
        .split(", ")
        .flat_map(|i| i.split(" and "))
        .map(|i| i.trim().trim_start_matches("and ").trim())
        .map(|i| strip_quotes(i, quotes))
        .filter(|i| !i.is_empty())
        .collect();
    if items.len() < 2 {
        return None;
    }
    let boxes: Vec<&str> = nodes
        .iter()
        .filter(|n| matches!(n.role.as_str(), "checkbox" | "switch"))
        .map(|n| n.name.trim())
        .collect();
    let all_boxes = items
        .iter()
        .all(|i| boxes.iter().filter(|b| b.eq_ignore_ascii_case(i)).count() == 1);
    all_boxes.then(|| {
        items
            .iter()
            .map(|i| format!("Check the \"{i}\" checkbox"))
            .collect()
    })
}

/// `item` without the quote marks around it, when it is one of the step's
/// quoted strings.
fn strip_quotes<'a>(item: &'a str, quotes: &[String]) -> &'a str {
    QUOTE_MARKS
        .iter()
        .find_map(|(open, close)| {
            let inner = item.strip_prefix(open)?.strip_suffix(close)?;
            quotes.iter().any(|q| q == inner).then_some(inner)
        })
        .unwrap_or(item)
}

/// "Enter the username 'u' and the password 'p' into the fields": each
/// quoted value typed into the field named just before it.
fn values_by_label(step: &str, quotes: &[String]) -> Option<Vec<String>> {
    if quotes.len() < 2 {
        return None;
    }
    let lower = step.to_ascii_lowercase();
    let verb = ["enter ", "type ", "fill in ", "fill ", "input "]
        .iter()
        .find(|v| lower.starts_with(*v))?;
    let mut from = verb.len();
    let mut steps = Vec::new();
    for q in quotes {
        let (open, close) = QUOTE_MARKS
            .iter()
            .find(|(o, c)| step[from..].contains(&format!("{o}{q}{c}")))?;
        let at = from + step[from..].find(&format!("{open}{q}{close}"))?;
        let before = step[from..at].trim().trim_start_matches(',').trim();
        // Values after the first are joined by "and" / a comma.
        let before = if steps.is_empty() {
            before
        } else {
            before.strip_prefix("and ")?.trim()
        };
        let label = before
            .strip_prefix("the ")
            .or_else(|| before.strip_prefix("The "))
            .unwrap_or(before)
            .trim();
        let words = label.split_whitespace().count();
        if !(1..=3).contains(&words)
            || VERBS
                .iter()
                .any(|(w, _)| find_words(&label.to_ascii_lowercase(), w).is_some())
        {
            return None;
        }
        let verb = step[..verb.len()].trim();
        steps.push(format!("{verb} {open}{q}{close} into the {label} field"));
        from = at + open.len() + q.len() + close.len();
    }
    Some(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_is_the_first_and_the_second() {
        assert_eq!(
            both(
                "Enter the password \"Q3h\" into both text fields",
                &quoted("Enter the password \"Q3h\" into both text fields")
            ),
            Some(vec![
                "Enter the password \"Q3h\" into the 1st text field".to_string(),
                "Enter the password \"Q3h\" into the 2nd text field".to_string(),
            ])
        );
        assert_eq!(
            both("Check both boxes.", &[]).map(|v| v[1].clone()),
            Some("Check the 2nd box.".into())
        );
        // Not a plural after it: no reading.
        assert_eq!(both("Select both Red and Blue", &[]), None);
        // Quoted, it is a name.
        assert_eq!(
            both("Click 'both sides'", &quoted("Click 'both sides'")),
            None
        );
    }

    #[test]
    fn values_go_to_the_fields_named_before_them() {
        let step = "Enter the username \"keli\" and the password \"3hI\" into the text fields";
        assert_eq!(
            values_by_label(step, &quoted(step)),
            Some(vec![
                "Enter \"keli\" into the username field".to_string(),
                "Enter \"3hI\" into the password field".to_string(),
            ])
        );
        // "with": a field and its value, one action.
        let step = "Fill 'Email' with 'a@b.c'";
        assert_eq!(values_by_label(step, &quoted(step)), None);
        let step = "Type 'ada' into 'User name'";
        assert_eq!(values_by_label(step, &quoted(step)), None);
    }

    #[test]
    fn a_list_of_checkboxes_is_one_check_each() {
        let nodes = vec![
            SnapshotNode::element("checkbox", "vrD", "e1"),
            SnapshotNode::element("checkbox", "YT0peP", "e2"),
            SnapshotNode::element("checkbox", "C0ZWRz", "e3"),
            SnapshotNode::element("button", "Submit", "e4"),
        ];
        assert_eq!(
            checkbox_list(&nodes, "Select C0ZWRz, vrD, YT0peP", &[]),
            Some(vec![
                "Check the \"C0ZWRz\" checkbox".to_string(),
                "Check the \"vrD\" checkbox".to_string(),
                "Check the \"YT0peP\" checkbox".to_string(),
            ])
        );
        // A name that is no checkbox: not this reading.
        assert_eq!(checkbox_list(&nodes, "Select vrD and Submit", &[]), None);
    }
}
