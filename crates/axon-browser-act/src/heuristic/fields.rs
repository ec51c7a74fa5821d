//! Typing into a field ("Type 'ada' into Username") and setting a field to
//! a value ("Set the country to Germany").

use super::*;

/// "Set the country to Germany", "Change the date of birth to 1990-05-17":
/// a list takes the value as a selection, a field as typed text.
pub(super) fn set(
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
    // "Move the document to the trash": a place, not a value; the step
    // names a control ("Move to trash").
    if quotes.is_empty()
        && ["the ", "a ", "an ", "my "]
            .iter()
            .any(|article| value.to_ascii_lowercase().starts_with(article))
    {
        return click(nodes, quotes, step, "", None);
    }
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
pub(super) fn type_into(
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
        // "Enter the number '16' into the 3rd textbox": the field is named
        // after "into", and the words before the value say what it is.
        [text] => {
            let after = lower
                .find(&text.to_ascii_lowercase())
                .map_or(0, |at| at + text.len());
            let into = ["into", "in", "on"]
                .iter()
                .filter_map(|w| find_words(&lower[after..], w).map(|at| after + at + w.len()))
                .min();
            match into {
                Some(at) => (text.clone(), target_words(&lower[at..], "")),
                None => (text.clone(), target_words(unq, verb)),
            }
        }
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
    // "into the textarea", "in the 3rd input textbox": the kind of field.
    let phrase = unquoted(step, quotes).replacen(&text, " ", 1);
    let picked = by_kind(nodes, &phrase, verb)
        .or_else(|| by_position(nodes, &field, &EDITABLE, Some(&EDITABLE)));
    if let Some((node, how)) = picked {
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

/// "Enter the phone number 555-0100", "Type the user name ada": the longest
/// run of words after the verb that names a field well, and the rest as the
/// text.
pub(super) fn field_then_value(
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

/// Roles a value can be set on.
const SETTABLE: [&str; 9] = [
    "textbox",
    "searchbox",
    "combobox",
    "spinbutton",
    "date",
    "time",
    "datetime",
    "slider",
    "listbox",
];

/// A number at the end of a step after "to" or "at" ("Move the volume
/// slider to 10", "Put the speed slider at 1.25"): the number and where
/// the joiner starts.
fn trailing_number(step: &str) -> Option<(String, usize)> {
    let trimmed = step.trim().trim_end_matches('.');
    let (before, last) = trimmed.rsplit_once(char::is_whitespace)?;
    last.parse::<f64>().ok()?;
    let before = before.trim_end();
    let lower = before.to_ascii_lowercase();
    ["to", "at"]
        .iter()
        .find(|w| lower.ends_with(&format!(" {w}")))
        .map(|w| (last.to_string(), before.len() - w.len()))
}

/// "Move the volume slider to 10", "Turn the volume down to 0", "Drag the
/// volume slider to 100", "Put the speed slider at 1.25": on a page with a
/// slider or a number field, a step that ends "to N" or "at N" sets the
/// field its other words name (or the one the kind names) to N. `None` when
/// the step does not end so, or names no such field.
pub(super) fn set_number(
    nodes: &[SnapshotNode],
    step: &str,
) -> Option<Result<Decision, ToolError>> {
    let (value, at) = trailing_number(step)?;
    let numeric = ["slider", "spinbutton"];
    if !nodes.iter().any(|n| numeric.contains(&n.role.as_str())) {
        return None;
    }
    let phrase = &step[..at];
    let (node, score, how) = match by_kind(nodes, phrase, "") {
        Some((node, how)) => (node, 0.8, how),
        None => {
            // "the speed slider": the kind's words name no field.
            let lower = kind_in(phrase).map_or_else(|| norm(phrase), |(_, rest)| rest);
            let field = lower
                .split_whitespace()
                .filter(|w| !NUMBER_VERBS.contains(w) && !FILLER.contains(w))
                .collect::<Vec<_>>()
                .join(" ");
            let (node, score) = best(nodes, &field, &numeric, None).ok()?;
            (node, score, format!("matched {field:?}"))
        }
    };
    Some(decision(
        on(node, ActionKind::Type, Some(value.clone())),
        score,
        format!("Set {} {:?} to {value} ({how})", node.role, node.name),
    ))
}

/// Verbs and adverbs of setting a number ("move … up to", "turn … down to").
pub(super) const NUMBER_VERBS: [&str; 14] = [
    "set", "move", "slide", "drag", "turn", "put", "adjust", "change", "up", "down", "raise",
    "lower", "bring", "make",
];

/// "Volume: 55", "Company name: Initech", "Languages spoken: Spanish,
/// Portuguese": a field's name, a colon and the value, with no verb before
/// the colon. The field is the settable element the left side names well
/// (0.6 or better); a list takes the value (or values) as a selection, a
/// checkbox nothing here, a field the text. `None` when the step has no such
/// shape or names no field.
pub(super) fn labelled(nodes: &[SnapshotNode], step: &str) -> Option<Result<Decision, ToolError>> {
    let (left, right) = step.split_once(':')?;
    let value = right.trim().trim_end_matches('.').trim();
    let left_lower = left.to_lowercase();
    if value.is_empty()
        || left.split_whitespace().count() > 5
        || VERBS
            .iter()
            .any(|(v, _)| find_words(&left_lower, v).is_some())
    {
        return None;
    }
    let field = target_words(left, "");
    let (node, score) = best(nodes, &field, &SETTABLE, None).ok()?;
    if score < 0.6 {
        return None;
    }
    let action = match node.role.as_str() {
        "combobox" | "listbox" if below(nodes, node).iter().any(|o| o.role == "option") => {
            let values = split_values(&value.replace(',', " and "));
            let mut action = on(node, ActionKind::Select, None);
            match values.as_slice() {
                [one] => action.args.text = Some(one.clone()),
                many => action.args.values = Some(many.to_vec()),
            }
            action
        }
        _ => on(node, ActionKind::Type, Some(value.to_string())),
    };
    Some(decision(
        action,
        score,
        format!("Set {} to {value:?}", matched(&field, node)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_number_after_to_or_at_is_a_setting() {
        assert_eq!(
            trailing_number("Move the slider to 10"),
            Some(("10".into(), 16))
        );
        assert_eq!(
            trailing_number("Put the speed slider at 1.25.").map(|t| t.0),
            Some("1.25".into())
        );
        assert_eq!(trailing_number("Go to page 2"), None);
        assert_eq!(trailing_number("Set it to loud"), None);
    }
}
