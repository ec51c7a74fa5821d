//! Elements picked by position ("the third link", "Save #2", "the last
//! item") or by their role alone ("press the button" on a page with one).

use super::*;

/// Whether `text` has an ordinal ("second", "3rd", "last", "#2", "number 2").
pub(super) fn has_ordinal(text: &str) -> bool {
    let lower = norm(text);
    // `norm` reads "#2" as "number 2".
    lower
        .split_whitespace()
        .any(|w| ORDINALS.iter().any(|(o, _)| *o == w))
        || find_words(&lower, "number").is_some()
}

/// Ordinal words and the position they name (1-based; 0 is "last").
pub(super) const ORDINALS: [(&str, usize); 23] = [
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

/// The position an ordinal word names (1-based; 0 is "last"): "third",
/// "3rd", "last".
pub(super) fn ordinal(word: &str) -> Option<usize> {
    ORDINALS.iter().find(|(o, _)| *o == word).map(|(_, n)| *n)
}

/// "3" or "three" (up to ten).
pub(super) fn number(word: &str) -> Option<usize> {
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
pub(super) fn by_position<'a>(
    nodes: &'a [SnapshotNode],
    target: &str,
    roles: &[&str],
    hint: Option<&[&str]>,
) -> Option<(&'a SnapshotNode, String)> {
    let lower = norm(target);
    let read = Positional::read(nodes, &lower);
    let hinted = hint.filter(|h| h.iter().any(|r| roles.contains(r)));
    // "the 6th search result", "the first post": the items of the page's
    // longest run of links (or of the role named) at one depth.
    if read.position.is_some()
        && !read.rest.is_empty()
        && read.rest.iter().all(|w| ITEM_NOUNS.contains(&stem(w)))
    {
        let items = item_pool(nodes, &read, hinted);
        let (pick, how) = at_position(&items, read.position, false)?;
        return Some((pick, format!("{how} of {} items", items.len())));
    }
    // "the Last name field" names a field; it is not the last one.
    if let Some(word) = read.ordinal_word
        && nodes
            .iter()
            .filter(|n| read.fits(n, roles, hinted))
            .any(|n| find_words(&norm(&n.name), word).is_some())
    {
        return None;
    }
    let candidates = read.candidates(nodes, roles, hinted);
    // Role alone: only when it names one element.
    let alone = read.rest.is_empty() && (hinted.is_some() || read.state.is_some());
    let (pick, how) = at_position(&candidates, read.position, alone)?;
    Some((pick, format!("{how} of {} {}", candidates.len(), pick.role)))
}

/// A position the page does not hold ("the 6th search result" where five
/// are shown, "the second Save button" beside one): a refusal naming what
/// the page has, never the nearest name (the Search button, for the 6th
/// search result). `None` when the step names no position, or a name on the
/// page holds its ordinal word ("the Last name field").
pub(super) fn beyond_the_page(
    nodes: &[SnapshotNode],
    target: &str,
    roles: &[&str],
    hint: Option<&[&str]>,
) -> Option<ToolError> {
    let lower = norm(target);
    let read = Positional::read(nodes, &lower);
    let position = read.position?;
    if let Some(word) = read.ordinal_word
        && nodes
            .iter()
            .any(|n| n.reference.is_some() && find_words(&norm(&n.name), word).is_some())
    {
        return None;
    }
    let hinted = hint.filter(|h| h.iter().any(|r| roles.contains(r)));
    let item_step =
        !read.rest.is_empty() && read.rest.iter().all(|w| ITEM_NOUNS.contains(&stem(w)));
    let (pool, what) = match item_step {
        true => (
            item_pool(nodes, &read, hinted),
            "items in its longest list".to_string(),
        ),
        false => (
            read.candidates(nodes, roles, hinted),
            match hinted {
                Some(h) => format!("{} elements that fit", h.join("/")),
                None => "elements that fit".to_string(),
            },
        ),
    };
    // None of the roles the step's words hint at ("switch to tab 3" reads
    // "switch" as a role): the hint, not the page, is wrong; the name
    // match decides.
    if pool.is_empty() && !item_step {
        return None;
    }
    let asked = match position {
        0 => "the last".to_string(),
        n => format!("number {n}"),
    };
    Some(
        fail(
            "element_not_found",
            format!(
                "{:?} asks for {asked}, but the page shows {} {what}",
                target.split_whitespace().collect::<Vec<_>>().join(" "),
                pool.len()
            ),
        )
        .with_candidates(crate::candidates::of(nodes, &pool)),
    )
}

/// The elements a step picks by their state alone when it picks several
/// ("Expand the collapsed section" on a page with three collapsed), with
/// the state: what an `ambiguous_step` names. Empty when the step names a
/// position or no state, or the state picks one element or none.
pub(super) fn tied_by_state<'a>(
    nodes: &'a [SnapshotNode],
    target: &str,
    roles: &[&str],
    hint: Option<&[&str]>,
) -> (Vec<&'a SnapshotNode>, &'static str) {
    let lower = norm(target);
    let read = Positional::read(nodes, &lower);
    let hinted = hint.filter(|h| h.iter().any(|r| roles.contains(r)));
    match read.state {
        Some(state) if read.position.is_none() => {
            let tied = read.candidates(nodes, roles, hinted);
            (if tied.len() > 1 { tied } else { Vec::new() }, state)
        }
        _ => (Vec::new(), ""),
    }
}

/// What a step's words say about where an element is: a position ("third",
/// "#2", "number 2", "tab 3"), a state ("collapsed"), and the other words,
/// which name it.
struct Positional<'w> {
    position: Option<usize>,
    ordinal_word: Option<&'static str>,
    state: Option<&'static str>,
    /// The step names a section of a page ("the second question", "the
    /// last FAQ entry"): a disclosure, which is expanded or collapsed
    /// (unless the step names a role too: "the first link in the section").
    section: bool,
    rest: Vec<&'w str>,
}

impl<'w> Positional<'w> {
    fn read(nodes: &[SnapshotNode], lower: &'w str) -> Self {
        let words: Vec<&str> = lower.split_whitespace().collect();
        let mut read = Positional {
            position: None,
            ordinal_word: None,
            state: None,
            section: false,
            rest: Vec::new(),
        };
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            if let Some((o, n)) = ORDINALS.iter().find(|(o, _)| *o == w) {
                read.position = Some(*n);
                read.ordinal_word = Some(*o);
            } else if w == "number"
                && let Some(n) = words.get(i + 1).and_then(|d| number(d))
            {
                read.position = Some(n);
                i += 1;
            } else if let Some(n) = number(w).filter(|_| {
                // "tab 3": a number after a role word, unless it is a name
                // on the page ("Item 37").
                i > 0
                    && ROLE_WORDS.iter().any(|(r, _)| *r == words[i - 1])
                    && !nodes.iter().any(|n| {
                        find_words(&norm(&n.name), &format!("{} {w}", words[i - 1])).is_some()
                    })
            }) {
                read.position = Some(n);
            } else if let Some((_, s)) = STATE_WORDS.iter().find(|(word, _)| *word == w) {
                read.state = Some(*s);
            } else if SECTION_NOUNS.contains(&stem(w)) {
                read.section = true;
            } else if !FILLER.contains(&w) && !JOINERS.contains(&w) {
                read.rest.push(w);
            }
            i += 1;
        }
        read
    }

    /// Whether `n` is of the roles (the hinted ones, when the step hints)
    /// and in the state the step names.
    fn fits(&self, n: &SnapshotNode, roles: &[&str], hinted: Option<&[&str]>) -> bool {
        is_candidate(n, roles)
            && hinted.is_none_or(|h| h.contains(&n.role.as_str()))
            && self
                .state
                .is_none_or(|s| n.states.iter().any(|have| have == s))
            && (!self.section
                || hinted.is_some()
                || n.states
                    .iter()
                    .any(|have| have == "expanded" || have == "collapsed"))
    }

    /// The elements the step's words fit, in document order.
    fn candidates<'a>(
        &self,
        nodes: &'a [SnapshotNode],
        roles: &[&str],
        hinted: Option<&[&str]>,
    ) -> Vec<&'a SnapshotNode> {
        let named = self.rest.join(" ");
        let in_heading = |n: &&SnapshotNode| parent(nodes, n).is_some_and(|p| p.role == "heading");
        // "The last FAQ entry": sections counted are an accordion's headers,
        // whatever role the other words hint at (an "entry" is also a tree
        // item).
        if self.section && self.position.is_some() && named.is_empty() {
            let headers: Vec<&SnapshotNode> = nodes
                .iter()
                .filter(|n| self.fits(n, roles, None))
                .filter(in_heading)
                .collect();
            if headers.len() >= 2 {
                return headers;
            }
        }
        let candidates: Vec<&SnapshotNode> = nodes
            .iter()
            .filter(|n| self.fits(n, roles, hinted))
            .filter(|n| named.is_empty() || similarity(&named, &n.name) >= NOT_FOUND)
            .collect();
        // Several in that state ("the collapsed section"), or sections
        // counted ("the second question"): an accordion's section headers
        // are buttons in headings (the WAI-ARIA pattern), before a tree's
        // folders or a lone disclosure.
        let headers: Vec<&SnapshotNode> = candidates
            .iter()
            .copied()
            .filter(|n| parent(nodes, n).is_some_and(|p| p.role == "heading"))
            .collect();
        match headers.as_slice() {
            [_] if self.state.is_some() && self.position.is_none() && candidates.len() > 1 => {
                headers
            }
            [_, _, ..] if self.section && self.position.is_some() => headers,
            _ => candidates,
        }
    }
}

/// The element at `position` among `candidates` (1-based; 0 is the last),
/// or with no position the only candidate when `alone` allows one; and how
/// it was picked ("number 3", "the last", "the only one").
pub(super) fn at_position<'a>(
    candidates: &[&'a SnapshotNode],
    position: Option<usize>,
    alone: bool,
) -> Option<(&'a SnapshotNode, String)> {
    let pick = match position {
        Some(0) => candidates.last().copied(),
        Some(n) => candidates.get(n.checked_sub(1)?).copied(),
        None if alone && candidates.len() == 1 => candidates.first().copied(),
        None => None,
    }?;
    let how = match position {
        Some(0) => "the last".to_string(),
        Some(n) => format!("number {n}"),
        None => "the only one".to_string(),
    };
    Some((pick, how))
}

/// Words for a state an element is in, and the state ("the collapsed
/// section", "the section that is closed").
const STATE_WORDS: [(&str, &str); 8] = [
    ("collapsed", "collapsed"),
    ("closed", "collapsed"),
    ("folded", "collapsed"),
    ("expanded", "expanded"),
    ("unchecked", "unchecked"),
    ("unticked", "unchecked"),
    ("checked", "checked"),
    ("ticked", "checked"),
];

/// Nouns for a section of a page that opens and closes (an accordion's
/// panel, a FAQ's question), stemmed.
const SECTION_NOUNS: [&str; 6] = ["section", "question", "panel", "topic", "answer", "faq"];

/// The step's section nouns ("the second question": "question"), which the
/// target's words drop as filler but a position counts among.
pub(super) fn section_words(step: &str) -> String {
    norm(step)
        .split_whitespace()
        .filter(|w| SECTION_NOUNS.contains(&stem(w)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Nouns for the items of a list ("the 6th search result", "the first
/// post", "the second suggestion"), stemmed.
const ITEM_NOUNS: [&str; 8] = [
    "search",
    "result",
    "post",
    "article",
    "story",
    "hit",
    "suggestion",
    "headline",
];

/// The items a step counts ("the last post"): on a page of articles (a
/// feed) and a noun for one, each article's link (or first control); else the
/// longest run of links (or of the roles hinted) at one depth.
fn item_pool<'a>(
    nodes: &'a [SnapshotNode],
    read: &Positional,
    hinted: Option<&[&str]>,
) -> Vec<&'a SnapshotNode> {
    let posts = read
        .rest
        .iter()
        .any(|w| ["post", "article", "story"].contains(&stem(w)));
    if posts {
        let firsts: Vec<&SnapshotNode> = nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.role == "article")
            .filter_map(|(at, a)| {
                let inside = || nodes[at + 1..].iter().take_while(|n| n.depth > a.depth);
                // Its link opens it ("Read more", the title); else its first control.
                inside()
                    .find(|n| n.actionable() && n.role == "link")
                    .or_else(|| inside().find(|n| n.actionable()))
            })
            .collect();
        if !firsts.is_empty() {
            return firsts;
        }
    }
    items(nodes, hinted.unwrap_or(&["link"]))
}

/// The items of a list of `roles`: the elements of the longest run of them
/// at one depth (results, not the pager's links below them; the options of
/// the open list).
fn items<'a>(nodes: &'a [SnapshotNode], roles: &[&str]) -> Vec<&'a SnapshotNode> {
    let of_role: Vec<&SnapshotNode> = nodes
        .iter()
        .filter(|n| n.reference.is_some() && roles.contains(&n.role.as_str()))
        .collect();
    let mut by_depth: std::collections::BTreeMap<usize, Vec<&SnapshotNode>> = Default::default();
    for n in of_role {
        by_depth.entry(n.depth).or_default().push(n);
    }
    by_depth
        .into_values()
        .filter(|group| !is_pager(group))
        .max_by_key(|group| group.len())
        .unwrap_or_default()
}

/// A pager's links ("1 2 3 >", "Prev 1 2 Next"): pages, never the items a
/// position counts. Counted as items, "the 2nd search result" on a page of
/// three results clicked the pager's "2" (MiniWoB++'s search-engine).
fn is_pager(group: &[&SnapshotNode]) -> bool {
    const STEPS: [&str; 12] = [
        "<", ">", "«", "»", "‹", "›", "next", "prev", "previous", "first", "last", "…",
    ];
    group.iter().all(|n| {
        let name = n.name.trim().to_lowercase();
        name.chars().all(|c| c.is_ascii_digit()) && !name.is_empty()
            || STEPS.contains(&name.as_str())
    })
}

/// The node `n` sits in: the nearest one before it, less deep.
fn parent<'a>(nodes: &'a [SnapshotNode], n: &SnapshotNode) -> Option<&'a SnapshotNode> {
    let at = nodes.iter().position(|m| std::ptr::eq(m, n))?;
    nodes[..at].iter().rev().find(|m| m.depth < n.depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(role: &str, name: &str, r: &str, depth: usize) -> SnapshotNode {
        let mut n = SnapshotNode::element(role, name, r);
        n.depth = depth;
        n
    }

    #[test]
    fn result_nouns_count_the_longest_run_of_links_at_one_depth() {
        let mut page: Vec<SnapshotNode> = (1..=4)
            .map(|i| at("link", &format!("Boot {i}"), &format!("r{i}"), 0))
            .collect();
        page.push(at("navigation", "", "n", 0));
        page.extend((1..=2).map(|i| at("link", &i.to_string(), &format!("p{i}"), 1)));
        let pick =
            |t: &str| by_position(&page, t, &CLICKABLE, None).map(|(n, _)| n.reference.clone());
        assert_eq!(pick("3rd search result"), Some(Some("r3".into())));
        // A pager longer than the results is still the pager.
        let mut paged = page.clone();
        paged.extend([
            at("link", "3", "p3", 1),
            at("link", "4", "p4", 1),
            at("link", ">", "p5", 1),
        ]);
        let second = by_position(&paged, "2nd search result", &CLICKABLE, None);
        assert_eq!(
            second.map(|(n, _)| n.reference.clone()),
            Some(Some("r2".into()))
        );
        assert_eq!(pick("last result"), Some(Some("r4".into())));
        assert_eq!(ordinal("third"), Some(3));
        assert_eq!(ordinal("3"), None);
        assert_eq!(number("three"), Some(3));
    }
}
