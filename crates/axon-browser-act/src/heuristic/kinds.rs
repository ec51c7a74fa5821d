//! Words that name a kind of control ("button", "link", "text field", …)
//! and the roles they mean.

use super::*;

/// Words that say which kind of element, and the roles they mean.
pub(super) const ROLE_WORDS: [(&str, &[&str]); 20] = [
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
pub(super) const FIELD_ROLES: [&str; 7] = [
    "textbox",
    "searchbox",
    "combobox",
    "spinbutton",
    "date",
    "time",
    "datetime",
];

pub(super) const EDITABLE: [&str; 7] = [
    "textbox",
    "searchbox",
    "combobox",
    "spinbutton",
    "date",
    "time",
    "datetime",
];

pub(super) const CLICKABLE: [&str; 16] = [
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

/// The role words of a step ("link", "tab"), which target words drop but a
/// positional pick needs back.
pub(super) fn role_words(step: &str) -> String {
    let lower = norm(step);
    ROLE_WORDS
        .iter()
        .filter(|(w, _)| names_role(&lower, w))
        .map(|(w, _)| *w)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the role word `w` is in `lower` as a role: "Switch to the tab"
/// is a verb, not the switch role.
fn names_role(lower: &str, w: &str) -> bool {
    find_words(lower, w).is_some() && (w != "switch" || find_words(lower, "switch to").is_none())
}

/// The roles the step's words point at, if any.
pub(super) fn role_hint(lower: &str) -> Option<&'static [&'static str]> {
    ROLE_WORDS
        .iter()
        .find(|(w, _)| names_role(lower, w))
        .map(|(_, roles)| *roles)
}

/// What a select step can click instead of selecting in a list: checkboxes,
/// radios, tabs, options of an open list, menu items, and elements acting as
/// controls (a list item with a click handler).
pub(super) const CHECKABLE: [&str; 9] = [
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

/// A kind of control as people name it ("the textarea", "the date field",
/// "a checkbox widget"): the words, the roles, and what else tells it apart
/// from controls of the same role.
pub(super) struct Kind {
    pub(super) words: &'static [&'static str],
    pub(super) roles: &'static [&'static str],
    pub(super) test: fn(&SnapshotNode) -> bool,
    /// Plain fields before date and e-mail fields ("the text field").
    pub(super) plain_first: bool,
}

fn has_state(n: &SnapshotNode, state: &str) -> bool {
    n.states.iter().any(|s| s == state)
}

fn any_of(_: &SnapshotNode) -> bool {
    true
}

fn multiline(n: &SnapshotNode) -> bool {
    has_state(n, "multiline")
}

fn password(n: &SnapshotNode) -> bool {
    has_state(n, "password")
}

fn email(n: &SnapshotNode) -> bool {
    let name = n.name.to_lowercase();
    name.contains('@') || name.contains("email") || name.contains("e-mail")
}

fn date(n: &SnapshotNode) -> bool {
    n.role == "date" || dates::names_a_date(&n.name)
}

/// A one-line text field (not a password, not a date picker's field).
fn one_line(n: &SnapshotNode) -> bool {
    !multiline(n) && !password(n)
}

/// The kinds, most specific words first ("text area" before "text").
pub(super) const KINDS: [Kind; 13] = [
    Kind {
        words: &[
            "textarea",
            "text area",
            "multi-line box",
            "multi-line field",
            "multiline field",
            "multi-line text box",
            "message box",
            "comment box",
        ],
        roles: &["textbox"],
        plain_first: false,
        test: multiline,
    },
    Kind {
        words: &["password field", "password box", "password input"],
        roles: &["textbox"],
        plain_first: false,
        test: password,
    },
    Kind {
        words: &["email field", "email box", "email input", "e-mail field"],
        roles: &["textbox"],
        plain_first: false,
        test: email,
    },
    Kind {
        words: &[
            "date field",
            "date picker",
            "datepicker",
            "date input",
            "date box",
        ],
        roles: &["date", "datetime", "textbox", "combobox"],
        plain_first: false,
        test: date,
    },
    Kind {
        words: &["time field", "time input", "time picker"],
        roles: &["time", "datetime"],
        plain_first: false,
        test: any_of,
    },
    Kind {
        words: &["slider", "range slider"],
        roles: &["slider"],
        plain_first: false,
        test: any_of,
    },
    Kind {
        words: &[
            "spinner",
            "spin button",
            "number field",
            "number input",
            "numeric field",
            "number box",
            "stepper",
        ],
        roles: &["spinbutton"],
        plain_first: false,
        test: any_of,
    },
    Kind {
        words: &["search box", "search field", "search bar"],
        roles: &["searchbox", "textbox", "combobox"],
        plain_first: false,
        test: |n| n.role == "searchbox" || n.name.to_lowercase().contains("search"),
    },
    Kind {
        words: &[
            "input textbox",
            "input text box",
            "text field",
            "text input",
            "textbox",
            "text box",
            "input field",
            "input box",
            "input",
            "text widget",
        ],
        roles: &["textbox", "searchbox"],
        plain_first: true,
        test: one_line,
    },
    Kind {
        words: &[
            "checkbox widget",
            "checkbox",
            "check box",
            "tickbox",
            "tick box",
        ],
        roles: &["checkbox", "switch"],
        plain_first: false,
        test: any_of,
    },
    Kind {
        words: &[
            "dropdown",
            "drop-down",
            "select box",
            "select list",
            "combo box",
        ],
        roles: &["combobox", "listbox"],
        plain_first: false,
        test: any_of,
    },
    Kind {
        words: &["radio button", "radio"],
        roles: &["radio"],
        plain_first: false,
        test: any_of,
    },
    Kind {
        words: &["button"],
        roles: &["button"],
        plain_first: false,
        test: any_of,
    },
];

/// Words beside a kind that name nothing ("a checkbox widget").
const KIND_FILLER: [&str; 6] = ["widget", "element", "control", "one", "page", "any"];

/// The kind of control the step names, and the step's words without the
/// kind's words (lowercased, normalised).
pub(super) fn kind_in(step: &str) -> Option<(&'static Kind, String)> {
    let lower = norm(step);
    KINDS.iter().find_map(|k| {
        k.words.iter().find_map(|w| {
            let at = find_words(&lower, w)?;
            let rest = format!("{} {}", &lower[..at], &lower[at + w.len()..]);
            Some((k, rest))
        })
    })
}

/// An element picked by the kind of control the step names, when the kind is
/// the clue: "the textarea", "a checkbox widget", "the 3rd input textbox",
/// "the second text field". Among the page's controls of that kind (for a
/// one-line text field: the plain ones first, not the date or e-mail fields,
/// when there are both), the one at the step's ordinal, the only one, or
/// for "a …" / "any …" the first.
/// `None` when the step names no kind, names an element by other words too,
/// or the kind has several elements and no ordinal picks one.
pub(super) fn by_kind<'a>(
    nodes: &'a [SnapshotNode],
    step: &str,
    verb: &str,
) -> Option<(&'a SnapshotNode, String)> {
    let (kind, rest) = kind_in(step)?;
    let rest = target_words(&rest, verb);
    let mut position = None;
    let mut other = Vec::new();
    for w in rest.split_whitespace() {
        let verb_word = VERBS.iter().any(|(v, _)| *v == w) || NUMBER_VERBS.contains(&w);
        match ordinal(w) {
            Some(n) => position = Some(n),
            None if !JOINERS.contains(&w) && !KIND_FILLER.contains(&w) && !verb_word => {
                other.push(w);
            }
            None => {}
        }
    }
    if !other.is_empty() {
        return None;
    }
    let of_kind: Vec<&SnapshotNode> = nodes
        .iter()
        .filter(|n| {
            n.reference.is_some() && kind.roles.contains(&n.role.as_str()) && (kind.test)(n)
        })
        .collect();
    let plain: Vec<&SnapshotNode> = of_kind
        .iter()
        .copied()
        .filter(|n| !date(n) && !email(n))
        .collect();
    let candidates = if kind.plain_first && !plain.is_empty() {
        plain
    } else {
        of_kind
    };
    // "a checkbox", "any button": whichever one; the first is taken.
    let lower = norm(step);
    let indefinite = kind
        .words
        .iter()
        .find_map(|w| find_words(&lower, w))
        .is_some_and(|at| {
            matches!(
                lower[..at].split_whitespace().next_back(),
                Some("a" | "an" | "any")
            )
        });
    let position = position.or(indefinite.then_some(1));
    let (pick, how) = at_position(&candidates, position, true)?;
    Some((
        pick,
        format!("{how} of {} {}", candidates.len(), kind.words[0]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(role: &str, name: &str, r: &str, states: &[&str]) -> SnapshotNode {
        let mut n = SnapshotNode::element(role, name, r);
        n.states = states.iter().map(|s| s.to_string()).collect();
        n
    }

    #[test]
    fn a_kind_picks_the_one_of_its_kind_or_the_one_at_an_ordinal() {
        let page = [
            field("textbox", "Subject", "e1", &[]),
            field("textbox", "Tell us more", "e2", &["multiline"]),
            field("textbox", "mm/dd/yyyy", "e3", &[]),
            field("textbox", "PIN", "e4", &["password"]),
            field("textbox", "Name", "e5", &[]),
        ];
        let pick = |step: &str| {
            by_kind(&page, step, "").map(|(n, _)| n.reference.clone().unwrap_or_default())
        };
        assert_eq!(pick("the textarea").as_deref(), Some("e2"));
        assert_eq!(pick("the date field").as_deref(), Some("e3"));
        assert_eq!(pick("the password field").as_deref(), Some("e4"));
        assert_eq!(
            pick("the second text field").as_deref(),
            Some("e5"),
            "plain fields first"
        );
        assert_eq!(pick("the text field"), None, "two plain ones: no pick");
        assert_eq!(
            pick("the Subject text field"),
            None,
            "named: the name decides"
        );
        assert!(kind_in("a checkbox widget").is_some());
        assert!(kind_in("the Username").is_none());
    }
}
