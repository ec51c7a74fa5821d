//! Which action a step asks for (its earliest verb), and the actions that need
//! no element: navigate to a URL, search, press a key, wait, scroll.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Verb {
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

pub(super) const VERBS: [(&str, Verb); 57] = [
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
    ("move", Verb::Set),
    ("slide", Verb::Set),
    ("adjust", Verb::Set),
    ("mark", Verb::Select),
    ("fold", Verb::Click),
    ("unfold", Verb::Click),
    ("scroll", Verb::Scroll),
];

/// Key names people write, and the key they mean.
pub(super) const KEYS: [(&str, &str); 18] = [
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

/// A URL in the step: absolute, a bare domain, or a path (resolved against
/// the current page).
pub(super) fn url_in(step: &str, current: &str) -> Option<String> {
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

/// Things no browser action can do: `tool_limit`.
pub(super) fn beyond_the_tools(lower: &str) -> Result<(), ToolError> {
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
pub(super) fn wait(from_wait: &str) -> Result<Decision, ToolError> {
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
pub(super) fn press(
    lower: &str,
    unq: &str,
    quotes: &[String],
) -> Option<Result<Decision, ToolError>> {
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
pub(super) fn navigate(
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
pub(super) fn search(quotes: &[String], unq: &str, word: &str) -> Result<Decision, ToolError> {
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
pub(super) fn click_verb(
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
pub(super) fn scroll(unq: &str) -> Result<Decision, ToolError> {
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

pub(super) fn seconds_in(text: &str) -> Option<f64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_durations_are_read_from_the_words() {
        assert_eq!(
            url_in("Go to example.com", "http://h/").as_deref(),
            Some("https://example.com")
        );
        assert_eq!(
            url_in("Open /about", "http://h/x").as_deref(),
            Some("http://h/about")
        );
        assert_eq!(url_in("Open the menu", "http://h/"), None);
        assert_eq!(seconds_in("wait 500 ms"), Some(0.5));
        assert_eq!(seconds_in("wait 2 minutes"), Some(120.0));
    }
}
