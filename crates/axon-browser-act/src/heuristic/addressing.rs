//! Which element a step means by its name: scoring names against the
//! step's words, the container a step names ("in the dialog"), and the click
//! on what was found.

use super::*;

/// Whether `n` is a candidate among `roles`: one of them, or (for a click) an
/// element that acts as a control without a role.
pub(super) fn is_candidate(n: &SnapshotNode, roles: &[&str]) -> bool {
    n.reference.is_some()
        && (roles.contains(&n.role.as_str()) || (roles.contains(&"button") && n.is_clickable()))
}

/// How well `name` fits `target`, 0..=1.
pub(super) fn similarity(target: &str, name: &str) -> f64 {
    let t = as_controls(&norm(target));
    let n = as_controls(&norm(name));
    if t.is_empty() || n.is_empty() {
        // A name of signs only ("♥♥♥") has no words: it matches as written.
        let bare = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let written = bare(target);
        return if t.is_empty() && !written.is_empty() && written == bare(name) {
            1.0
        } else {
            0.0
        };
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
    // Joiners and articles ("the number of copies", "in a new tab") name
    // nothing, on either side.
    let little = |w: &&str| JOINERS.contains(w) || matches!(*w, "the" | "a" | "an");
    let tw: Vec<&str> = t.split(' ').filter(|w| !little(w)).map(stem).collect();
    let nw: Vec<&str> = n.split(' ').filter(|w| !little(w)).map(stem).collect();
    let common = tw
        .iter()
        .filter(|w| nw.iter().any(|n| same_word(w, n)))
        .count() as f64;
    let union = (tw.len() + nw.len()) as f64 - common;
    // Nothing but little words on both sides ("in the"): no evidence.
    if union == 0.0 {
        return 0.0;
    }
    // Every word the step says is in the name, out of order or inflected
    // ("where do I find invoices" in "Where do I find my invoices?",
    // "cancellation" in "How do I cancel my plan?"): nearly as good as the
    // words in a row.
    if !tw.is_empty() && common == tw.len() as f64 {
        return 0.55 + 0.3 * common / nw.len() as f64;
    }
    0.8 * common / union
}

/// The best element for `target` among `roles` (all interactive ones when
/// `None`), steered by `hint`.
pub(super) fn best<'a>(
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
    let offered = |pool: Vec<&SnapshotNode>| crate::candidates::of(nodes, &pool);
    if score < NOT_FOUND {
        // The closest: those that share something with the target.
        let near = scored
            .iter()
            .take(5)
            .filter(|(_, s)| *s > 0.1)
            .map(|(n, _)| *n);
        return Err(fail(
            "element_not_found",
            format!(
                "nothing on the page matches {target:?} (closest: {} {:?})",
                top.role, top.name
            ),
        )
        .with_candidates(offered(near.collect())));
    }
    let tied: Vec<&SnapshotNode> = scored
        .iter()
        .take_while(|(_, s)| *s >= score - TIE)
        .map(|(n, _)| *n)
        .collect();
    // "Books" between "Books" and "BOOKS" (a heading drawn upper case):
    // the name written as the step writes it.
    if let [_, _, ..] = tied.as_slice()
        && let [exact] = tied
            .iter()
            .filter(|n| n.name.trim() == target.trim())
            .collect::<Vec<_>>()
            .as_slice()
    {
        return Ok((exact, score));
    }
    // An accordion header named by the button inside it ("Submit" around
    // button "Submit"): the control inside is what the name is.
    let innermost: Vec<&SnapshotNode> = tied
        .iter()
        .copied()
        .filter(|outer| {
            !tied
                .iter()
                .any(|inner| norm(&inner.name) == norm(&outer.name) && holds(nodes, outer, inner))
        })
        .collect();
    if let ([_, _, ..], [only]) = (tied.as_slice(), innermost.as_slice()) {
        return Ok((only, score));
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
        )
        .with_candidates(offered(tied)));
    }
    Ok((top, score))
}

/// Whether `outer` holds `inner` in the snapshot's tree (`inner` comes
/// after it, deeper, before anything as shallow as `outer`).
fn holds(nodes: &[SnapshotNode], outer: &SnapshotNode, inner: &SnapshotNode) -> bool {
    let Some(at) = nodes.iter().position(|n| std::ptr::eq(n, outer)) else {
        return false;
    };
    nodes[at + 1..]
        .iter()
        .take_while(|n| n.depth > outer.depth)
        .any(|n| std::ptr::eq(n, inner))
}

/// An element and why it was taken: `button "Log in" (matched: "login" ≈
/// "Log in", words)`; the name's source when the page did not give it.
pub(super) fn matched(target: &str, node: &SnapshotNode) -> String {
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

/// What a click step names: its first quoted string, else its words minus the
/// verb and filler (empty when it names nothing).
pub(super) fn clicked_thing(quotes: &[String], step: &str, verb: &str) -> String {
    quotes
        .first()
        .cloned()
        .unwrap_or_else(|| target_words(&unquoted(step, quotes), verb))
}

/// Words that name a container, and its roles.
pub(super) const CONTAINER_WORDS: [(&str, &[&str]); 13] = [
    ("list", &["list"]),
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
pub(super) fn container<'a>(
    nodes: &'a [SnapshotNode],
    step: &str,
) -> Option<(Vec<SnapshotNode>, String)> {
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

pub(super) fn click(
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

pub(super) fn click_among(
    nodes: &[SnapshotNode],
    quotes: &[String],
    step: &str,
    verb: &str,
    hint: Option<&[&str]>,
) -> Result<Decision, ToolError> {
    let whole = clicked_thing(quotes, step, verb);
    // "the pencil icon": the word before "icon" is what the control shows;
    // "Open the menu": a noun the filler drops is all the step names.
    let target = match (quotes.is_empty(), icon_named(step)) {
        (true, Some(icon)) => icon,
        _ if whole.is_empty() && find_words(&norm(step), "menu").is_some() => "menu".into(),
        _ => whole.clone(),
    };
    // By kind, position or role: the quoted name (if any), the other words
    // and the role words; a quoted name alone is left to the name match
    // below. Then by the item (row, list item, article) the other words name.
    let words = target_words(&unquoted(step, quotes), verb);
    let positional = format!(
        "{} {words} {} {}",
        quotes.join(" "),
        role_words(step),
        section_words(step)
    );
    let hint_here = hint.or(role_hint(&norm(step)));
    // A kind in quotes ("Click on a \"textarea\" widget") is the kind,
    // unless an element is named so.
    let quoted_kind = match quotes {
        [q] => {
            kind_in(q).is_some_and(|(_, rest)| rest.trim().is_empty())
                && !nodes.iter().any(|n| norm(&n.name) == norm(q))
        }
        _ => false,
    };
    let picked = if quotes.is_empty() || quoted_kind {
        by_kind(nodes, step, verb)
    } else {
        None
    }
    .or_else(|| {
        (quotes.is_empty() || has_ordinal(&words))
            .then(|| by_position(nodes, &positional, &CLICKABLE, hint_here))
            .flatten()
    })
    // A quoted name that an element has, word for word, is that element
    // ("Add book" is the "ADD BOOK" link, not the Add in the Books row).
    .or_else(|| {
        let named_so = quotes.iter().any(|q| {
            nodes
                .iter()
                .any(|n| is_candidate(n, &CLICKABLE) && norm(&n.name) == norm(q))
        });
        (!named_so).then(|| by_context(nodes, &whole)).flatten()
    });
    if let Some((node, how)) = picked {
        return decision(
            on(node, ActionKind::Click, None),
            0.75,
            format!("Click {} {:?} ({how})", node.role, node.name),
        );
    }
    // "The 6th search result" among five: what the page has, not the
    // nearest name.
    if (quotes.is_empty() || has_ordinal(&words))
        && let Some(refusal) = beyond_the_page(nodes, &positional, &CLICKABLE, hint_here)
    {
        return Err(refusal);
    }
    // "Expand the collapsed section" with three collapsed: say which are.
    let (tied, state) = tied_by_state(nodes, &positional, &CLICKABLE, hint_here);
    if !tied.is_empty() {
        let names: Vec<String> = tied
            .iter()
            .map(|n| format!("{} {:?}", n.role, n.name))
            .collect();
        return Err(fail(
            "ambiguous_step",
            format!(
                "{} elements are {state}: {}; name the one to {verb}",
                tied.len(),
                names.join(", ")
            ),
        )
        .with_candidates(crate::candidates::of(nodes, &tied)));
    }
    if target.is_empty() {
        // "Expand the section" where one thing on the page is collapsed.
        let collapsed: Vec<&SnapshotNode> = nodes
            .iter()
            .filter(|n| n.reference.is_some() && n.states.iter().any(|s| s == "collapsed"))
            .collect();
        // Several: the one whose name holds the step's kind word ("Section
        // #14" for "the section").
        let said = norm(step);
        let named: Vec<&SnapshotNode> = collapsed
            .iter()
            .copied()
            .filter(|n| {
                norm(&n.name)
                    .split_whitespace()
                    .any(|w| w.len() > 3 && find_words(&said, w).is_some())
            })
            .collect();
        let one = match (collapsed.as_slice(), named.as_slice()) {
            ([only], _) | (_, [only]) => Some(*only),
            _ => None,
        };
        if matches!(verb, "expand" | "open")
            && let Some(only) = one
        {
            return decision(
                on(only, ActionKind::Click, None),
                0.7,
                format!(
                    "Click {} {:?}, the one collapsed element",
                    only.role, only.name
                ),
            );
        }
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
    // A position the page's roles could not place, and a name that fits
    // only weakly: a guess, offered rather than taken.
    if has_ordinal(&words) && score < 0.5 {
        return Err(fail(
            "ambiguous_step",
            format!(
                "{step:?} names a position, and nothing on the page is counted so; the nearest name fits weakly ({})",
                matched(&target, node)
            ),
        )
        .with_candidates(crate::candidates::of(nodes, &[node])));
    }
    decision(
        on(node, ActionKind::Click, None),
        score,
        format!("Click {}", matched(&target, node)),
    )
}

/// The nodes below `list` in the tree (its options, for a list).
pub(super) fn below<'a>(nodes: &'a [SnapshotNode], list: &SnapshotNode) -> &'a [SnapshotNode] {
    let Some(at) = nodes.iter().position(|n| std::ptr::eq(n, list)) else {
        return &[];
    };
    let end = nodes[at + 1..]
        .iter()
        .position(|n| n.depth <= list.depth)
        .map_or(nodes.len(), |p| at + 1 + p);
    &nodes[at + 1..end]
}

/// Roles that hold one item's controls together: a table row, a list item,
/// an article of a feed.
const ITEM_ROLES: [&str; 4] = ["row", "listitem", "article", "group"];

/// Words that name the kind of an item, not which one ("the post about …").
const ITEM_WORDS: [&str; 20] = [
    "row", "post", "article", "item", "entry", "message", "email", "mail", "user", "member",
    "line", "card", "result", "update", "next", "beside", "near", "about", "one", "icon",
];

/// The nodes of the item (row, list item, article) that holds `nodes[i]`:
/// the nearest enclosing node of an item role, with everything below it.
fn item_of(nodes: &[SnapshotNode], i: usize) -> Option<&[SnapshotNode]> {
    let depth = nodes[i].depth;
    let at = (0..i)
        .rev()
        .find(|&j| nodes[j].depth < depth && ITEM_ROLES.contains(&nodes[j].role.as_str()))?;
    let end = at + 1 + below(nodes, &nodes[at]).len();
    Some(&nodes[at..end])
}

/// "Edit Bob Chen", "Click Delete in Carla Diaz's row", "Like the post about
/// maintenance", "the trash icon next to Your invoice": several controls
/// share the name the step gives (one per row), and the step's other words
/// pick the one whose item (its table row, list item or article) holds them.
/// `None` unless exactly one item holds at least half of those words.
pub(super) fn by_context<'a>(
    nodes: &'a [SnapshotNode],
    target: &str,
) -> Option<(&'a SnapshotNode, String)> {
    let t = norm(target);
    let t_words: Vec<&str> = t.split_whitespace().collect();
    let says = |name: &str| {
        let n = norm(name);
        !n.is_empty()
            && n.split_whitespace().all(|w| {
                t_words
                    .iter()
                    .any(|tw| same_word(stem(tw), stem(w)) || control_word(tw) == control_word(w))
            })
    };
    // The longest name the step says that several controls share.
    let mut shared: Vec<(&str, usize)> = Vec::new();
    for n in nodes
        .iter()
        .filter(|n| is_candidate(n, &CLICKABLE) && says(&n.name))
    {
        match shared
            .iter_mut()
            .find(|(name, _)| norm(name) == norm(&n.name))
        {
            Some((_, count)) => *count += 1,
            None => shared.push((n.name.as_str(), 1)),
        }
    }
    let name = shared
        .iter()
        .filter(|(_, count)| *count >= 2)
        .max_by_key(|(name, _)| name.len())?
        .0;
    let name_words = norm(name);
    let rest: Vec<&str> = t_words
        .iter()
        .copied()
        .filter(|w| {
            w.chars().count() > 1
                && !ITEM_WORDS.contains(w)
                && !JOINERS.contains(w)
                && !FILLER.contains(w)
                && !name_words
                    .split(' ')
                    .any(|n| control_word(n) == control_word(w))
        })
        .collect();
    if rest.is_empty() {
        return None;
    }
    let mut scored: Vec<(usize, f64)> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if !is_candidate(n, &CLICKABLE) || norm(&n.name) != name_words {
            continue;
        }
        let Some(item) = item_of(nodes, i) else {
            continue;
        };
        let text = norm(
            &item
                .iter()
                .map(|n| n.name.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        );
        let words: Vec<&str> = text.split_whitespace().collect();
        let held = rest
            .iter()
            .filter(|r| words.iter().any(|w| same_word(stem(r), stem(w))))
            .count();
        scored.push((i, held as f64 / rest.len() as f64));
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (&(i, score), next) = (scored.first()?, scored.get(1));
    if score < 0.5 || next.is_some_and(|n| n.1 >= score) {
        return None;
    }
    Some((
        &nodes[i],
        format!(
            "the one of {} whose item holds {:?}",
            scored.len(),
            rest.join(" ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_in_the_name_is_near_a_phrase_match_but_little_words_are_no_evidence() {
        assert!(similarity("where do i find invoices", "Where do I find my invoices?") > 0.6);
        assert!(similarity("cancellation", "How do I cancel my plan?") >= NOT_FOUND);
        // Joiners and articles alone name nothing, whatever the name says.
        assert_eq!(similarity("in the", "Save changes"), 0.0);
    }
}
