//! Choosing in lists: drop-downs, list boxes, several values in one step,
//! and the checkboxes, radios and options a choice can be a click on.

use super::*;

/// "Red and Blue", "red, green & blue" → each value; "only Green" → Green.
pub(super) fn split_values(option: &str) -> Vec<String> {
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

/// "Select 'Green' from the Colour dropdown", "Choose Germany in Country",
/// "Select Red and Blue in the colours list", or "Select the 'Remember me'
/// checkbox", "Pick express shipping", "Choose pears" (a click on what has
/// that name). A drop-down (`combobox`) takes the value as a selection; a
/// list box shows its options, so one value is a click on that option and
/// several are one selection.
pub(super) fn select(
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
    let (option, field) = read_choice(quotes, &lower, unq, verb, &lists);
    // "Pick the first suggestion", "the second option": by position.
    if quotes.is_empty() && has_ordinal(&option) {
        let positional = format!("{option} {}", role_words(step));
        if let Some((node, how)) =
            by_position(nodes, &positional, &CHECKABLE, hint.or(Some(&["option"])))
        {
            return decision(
                on(node, ActionKind::Click, None),
                0.75,
                format!("Click {} {:?} ({how})", node.role, node.name),
            );
        }
    }
    let values = split_values(&option);
    let wants_click = hint.is_some_and(|h| {
        h.iter()
            .any(|r| ["checkbox", "radio", "tab", "listitem", "treeitem"].contains(r))
    });
    let list_named = if field.is_empty() {
        None
    } else {
        best(nodes, &field, &["combobox", "listbox"], None)
            .ok()
            .or_else(|| labelled_list(nodes, &field).map(|l| (l, 0.8)))
    };
    if values.len() <= 1
        && (list_named.is_none() || wants_click)
        && let Some(clicked) = by_click(nodes, &lists, &option, hint, wants_click)
    {
        return clicked;
    }
    let list = which_list(nodes, &lists, list_named, &values, &field, &option)?;
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

/// A choice made by a click on what has the value's name (a checkbox, a
/// radio, a tab, a button), for a step that names no list or asks for a
/// click: the decision, or `None` to choose in a list instead. The options of
/// a drop-down are chosen by selecting, never by a click.
fn by_click(
    nodes: &[SnapshotNode],
    lists: &[&SnapshotNode],
    option: &str,
    hint: Option<&[&str]>,
    wants_click: bool,
) -> Option<Result<Decision, ToolError>> {
    let mut click_roles = CHECKABLE.to_vec();
    click_roles.push("button");
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
    if let Ok((node, score)) = best(&clickable, option, &click_roles, hint)
        && (score >= 0.6 || lists.is_empty() || wants_click)
    {
        return Some(decision(
            on(node, ActionKind::Click, None),
            score,
            format!("Click {}", matched(option, node)),
        ));
    }
    lists.is_empty().then(|| {
        Err(fail(
            "element_not_found",
            format!("nothing on the page to select {option:?} in"),
        ))
    })
}

/// What a select step chooses and where: the values (commas kept as "and"
/// until `split_values` splits them) and the list's name ("Select 'Germany'
/// from 'Country'", "Choose the colours red and blue"), empty when it names
/// none.
fn read_choice(
    quotes: &[String],
    lower: &str,
    unq: &str,
    verb: &str,
    lists: &[&SnapshotNode],
) -> (String, String) {
    let (mut option, mut field) = match quotes {
        [one] => (one.clone(), target_words(unq, verb)),
        // "Select 'Germany' from 'Country'": the last quote names the list
        // when a joiner comes before it; else all are values.
        [.., last]
            if ["from", "in", "on"].iter().any(|w| {
                find_words(lower, w).is_some_and(|at| lower[at..].contains(&last.to_lowercase()))
            }) =>
        {
            (quotes[..quotes.len() - 1].join(", "), last.clone())
        }
        [_, ..] => (quotes.join(", "), target_words(unq, verb)),
        [] => {
            let split = ["from", "in", "as", "for", "on"]
                .iter()
                .filter_map(|w| find_words(lower, w).map(|at| (at, w.len())))
                .min();
            // Commas separate values ("Brazil, Mauritania"): kept as "and",
            // which the words keep and `split_values` splits on.
            let listed = |s: &str| s.replace(',', " and ");
            match split {
                Some((at, len)) => (
                    target_words(&listed(&lower[..at]), verb),
                    target_words(&lower[at + len..], ""),
                ),
                None => (target_words(&listed(lower), verb), String::new()),
            }
        }
    };
    // "Choose the colours red and blue": the list named first.
    if field.is_empty() {
        for list in lists {
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
    (option, field)
}

/// The list a select step chooses in: the one it names; else the one with
/// an option of that value; else the page's only list.
fn which_list<'a>(
    nodes: &'a [SnapshotNode],
    lists: &[&'a SnapshotNode],
    list_named: Option<(&'a SnapshotNode, f64)>,
    values: &[String],
    field: &str,
    option: &str,
) -> Result<&'a SnapshotNode, ToolError> {
    // The list: the one named; else the one with an option of that value;
    // else the page's only list.
    let has_value = |l: &&SnapshotNode| {
        below(nodes, l)
            .iter()
            .any(|o| o.role == "option" && values.iter().any(|v| similarity(v, &o.name) >= 0.9))
    };
    Ok(match list_named {
        Some((list, _)) => list,
        None => match (lists.iter().copied().find(has_value), lists) {
            (Some(list), _) => list,
            // The page's only list, unless the step named another.
            (None, [only]) if field.is_empty() => *only,
            (None, _) => {
                let what = if field.is_empty() { option } else { field };
                best(nodes, what, &["combobox", "listbox"], None)?.0
            }
        },
    })
}

/// A drop-down known by the text before it ("Currency" then a button that
/// shows "USD" and opens a list): a combobox, a list box or a button that
/// opens and closes (its state `collapsed` or `expanded`), right after a
/// text that is the field's name.
fn labelled_list<'a>(nodes: &'a [SnapshotNode], field: &str) -> Option<&'a SnapshotNode> {
    let opens = |n: &SnapshotNode| {
        n.reference.is_some()
            && (n.role == "combobox"
                || n.role == "listbox"
                || (n.role == "button"
                    && n.states.iter().any(|s| s == "collapsed" || s == "expanded")))
    };
    let labelled: Vec<&SnapshotNode> = nodes
        .windows(2)
        .filter(|w| w[0].role == "text" && similarity(field, &w[0].name) >= 0.9 && opens(&w[1]))
        .map(|w| &w[1])
        .collect();
    match labelled.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_values_split_on_commas_and_ands() {
        assert_eq!(split_values("red and blue"), ["red", "blue"]);
        assert_eq!(split_values("red, green & blue"), ["red", "green", "blue"]);
        assert_eq!(split_values("only green"), ["green"]);
    }
}
