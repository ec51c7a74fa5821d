//! Controls that show a sign instead of a word (×, ☰, ⚙): what the signs
//! mean, and closing what a close button sits in.

use super::*;

/// Names of the buttons that close what they sit in.
pub(super) const CLOSERS: [&str; 7] = [
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
pub(super) fn close(
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
    let what = clicked_thing(quotes, step, verb);
    let dialog_words = [
        "dialog", "popup", "pop-up", "modal", "banner", "window", "overlay", "cookie", "cookies",
        "notice", "message", "it",
    ];
    let named = what.split_whitespace().any(|w| !dialog_words.contains(&w));
    match closers.as_slice() {
        [one] => {
            return decision(
                on(one, ActionKind::Click, None),
                0.8,
                format!("Click {} {:?} (closes)", one.role, one.name),
            );
        }
        // "Close the dialog" (or just "Close"): the dialog's, when one is open.
        [first, ..]
            if !named
                && nodes
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
    if named && let Ok(d) = click(nodes, quotes, step, verb, None) {
        return Ok(d);
    }
    // "Dismiss the notification" beside a dialog's ×: which × is not said.
    if closers.len() > 1 {
        return Err(fail(
            "ambiguous_step",
            format!(
                "{} close buttons on the page and {what:?} names none of them; say which",
                closers.len()
            ),
        )
        .with_candidates(crate::candidates::of(nodes, &closers)));
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

/// Signs that stand for a word, and the word a person reads them as: a
/// control that shows only "☰" is the menu.
pub(super) const SIGNS: [(char, &str); 43] = [
    ('×', "close"),
    ('✕', "close"),
    ('✖', "close"),
    ('⨯', "close"),
    ('☰', "menu"),
    ('≡', "menu"),
    ('⚙', "settings"),
    ('🔍', "search"),
    ('🔎', "search"),
    ('＋', "add"),
    ('+', "add"),
    ('−', "minus"),
    ('🗑', "delete"),
    ('⋮', "more"),
    ('⋯', "more"),
    ('🔔', "notifications"),
    ('✎', "edit"),
    ('✏', "edit"),
    ('⟳', "refresh"),
    ('↻', "refresh"),
    ('☆', "star"),
    ('★', "star"),
    ('♡', "like"),
    ('❤', "like"),
    ('⌂', "home"),
    ('✓', "ok"),
    ('✔', "ok"),
    ('🔖', "bookmark"),
    ('📎', "attach"),
    ('🔗', "link"),
    ('🖨', "print"),
    ('⬇', "download"),
    ('⬆', "upload"),
    ('↶', "undo"),
    ('↷', "redo"),
    ('‹', "previous"),
    ('›', "next"),
    ('ⓘ', "info"),
    ('ℹ', "info"),
    ('💬', "reply"),
    ('🔁', "repost"),
    ('👍', "like"),
    ('✉', "mail"),
];

/// Words for the same control: what a person sees on it (a gear, a trash
/// can) and what it does (settings, delete). The first word of a group is
/// the one both sides are compared as.
const SAME_CONTROL: [&[&str]; 16] = [
    &["close", "x", "dismiss"],
    &["menu", "hamburger"],
    &["settings", "gear", "cog", "preferences"],
    &["search", "magnifier", "magnifying"],
    &["add", "plus", "increase"],
    &["minus", "decrease", "reduce", "subtract", "fewer"],
    &["delete", "trash", "bin", "remove", "garbage"],
    &["more", "three-dot", "kebab", "ellipsis", "overflow", "dots"],
    &["notifications", "bell", "alerts"],
    &["edit", "pencil", "compose"],
    &["refresh", "reload"],
    &["star", "favourite", "favorite"],
    &["reply", "comment", "respond"],
    &["repost", "retweet", "reshare", "boost"],
    &["attach", "paperclip", "attachment", "clip"],
    &["info", "information"],
];

/// `word` as its group's first word (itself when it is in none).
pub(super) fn control_word(word: &str) -> &str {
    SAME_CONTROL
        .iter()
        .find(|group| group.contains(&word))
        .map_or(word, |group| group[0])
}

/// `text`'s words each as [`control_word`] ("gear icon" → "settings icon").
pub(super) fn as_controls(text: &str) -> String {
    text.split(' ')
        .map(control_word)
        .collect::<Vec<_>>()
        .join(" ")
}

/// "the pencil icon", "the ✕ on the toast", "the bell": when the step names
/// an icon ("… icon", "… symbol", "… sign"), the word before it is the
/// target ("pencil"), whatever else the step says.
pub(super) fn icon_named(step: &str) -> Option<String> {
    let lower = norm(step);
    let words: Vec<&str> = lower.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| matches!(*w, "icon" | "symbol" | "sign"))?;
    let before = *words.get(at.checked_sub(1)?)?;
    // "the trash can icon": the word a control is known by, when the last
    // one is the second half of a compound.
    let known = |w: &str| SAME_CONTROL.iter().any(|g| g.contains(&w));
    let compound = at
        .checked_sub(2)
        .and_then(|i| words.get(i))
        .filter(|first| !known(before) && known(first));
    let named = compound.copied().unwrap_or(before);
    (!FILLER.contains(&named)).then(|| named.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_control_shows_and_what_it_does_compare_equal() {
        assert_eq!(control_word("gear"), "settings");
        assert_eq!(control_word("trash"), "delete");
        assert_eq!(control_word("Paris"), "Paris");
        assert_eq!(as_controls("hamburger icon"), "menu icon");
        assert_eq!(
            icon_named("Click the pencil icon to write").as_deref(),
            Some("pencil")
        );
        assert_eq!(icon_named("Click the icon"), None);
        assert_eq!(
            icon_named("Click the trash can icon").as_deref(),
            Some("trash")
        );
        assert_eq!(control_word("comment"), "reply");
        assert_eq!(norm("📎"), "attach");
    }
}
