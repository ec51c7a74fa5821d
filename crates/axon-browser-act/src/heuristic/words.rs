//! The step's words: quoted strings, normalisation, whole-word search, stems
//! and one-letter typos, and the words that never name a target.

use super::*;

/// Strings in quotes: '…', "…", “…”, ‘…’ (an apostrophe inside a word is not
/// a quote).
pub(super) fn quoted(step: &str) -> Vec<String> {
    let chars: Vec<char> = step.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let close = match chars[i] {
            '"' => Some('"'),
            '\'' => Some('\''),
            '“' => Some('”'),
            '‘' => Some('’'),
            _ => None,
        };
        let at_start = i == 0 || !chars[i - 1].is_alphanumeric();
        if let (Some(close), true) = (close, at_start) {
            let end = (i + 1..chars.len()).find(|&j| {
                chars[j] == close && (j + 1 == chars.len() || !chars[j + 1].is_alphanumeric())
            });
            if let Some(end) = end {
                out.push(chars[i + 1..end].iter().collect::<String>());
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The quote marks a step may put around a name, as open and close.
pub(super) const QUOTE_MARKS: [(&str, &str); 4] =
    [("'", "'"), ("\"", "\""), ("“", "”"), ("‘", "’")];

/// `text` without its quoted parts.
pub(super) fn unquoted(text: &str, quotes: &[String]) -> String {
    let mut t = text.to_string();
    for q in quotes {
        for (open, close) in QUOTE_MARKS {
            t = t.replace(&format!("{open}{q}{close}"), " ");
        }
    }
    t
}

/// Lower case, words only, without the full stops that end them; a sign
/// reads as its word ("×" → "close", "☰" → "menu"; a lone "+" → "add"),
/// `icons::SIGNS`.
pub(super) fn norm(s: &str) -> String {
    let mut text = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        // "#2" is a position ("link #2", "Save #2"): "number 2".
        if c == '#' && chars.peek().is_some_and(char::is_ascii_digit) {
            text.push_str(" number ");
            continue;
        }
        match SIGNS.iter().find(|(sign, _)| *sign == c && c != '+') {
            Some((_, word)) => {
                text.push(' ');
                text.push_str(word);
                text.push(' ');
            }
            None => text.push(c),
        }
    }
    text.to_lowercase()
        .split(|c: char| c.is_whitespace())
        .map(|token| if token == "+" { "add" } else { token })
        .flat_map(|token| {
            token.split(|c: char| !c.is_alphanumeric() && c != '@' && c != '.' && c != '-')
        })
        // A dot inside a word stays ("example.com", "v1.2"); one that ends
        // it is the sentence's ("Click on Tab #2.").
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where `phrase` occurs in `lower` as whole words.
pub(super) fn find_words(lower: &str, phrase: &str) -> Option<usize> {
    // An empty phrase is nowhere (a name of signs only, norm'd to nothing).
    if phrase.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(at) = lower[from..].find(phrase) {
        let start = from + at;
        let end = start + phrase.len();
        let before = lower[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        let after = lower[end..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric());
        if before && after {
            return Some(start);
        }
        from = start + phrase.len().max(1);
    }
    None
}

/// Words that never name a target (articles, role nouns, politeness).
pub(super) const FILLER: [&str; 41] = [
    "the",
    "a",
    "an",
    "then",
    "please",
    "page",
    "this",
    "that",
    "your",
    "my",
    "its",
    "it",
    "button",
    "link",
    "checkbox",
    "box",
    "field",
    "input",
    "tab",
    "dropdown",
    "drop-down",
    "option",
    "menu",
    "item",
    "radio",
    "text",
    "textbox",
    "value",
    "labelled",
    "list",
    "entry",
    "area",
    "section",
    "question",
    "answer",
    "topic",
    "panel",
    "folder",
    "widget",
    "is",
    "currently",
];

/// Words that join a target to the rest of the step ("into the Username
/// field"): dropped before it only ("log in" keeps its "in").
pub(super) const JOINERS: [&str; 11] = [
    "on", "to", "in", "into", "of", "for", "from", "with", "as", "at", "and",
];

/// `step` without a last "below" / "above" ("Expand the section below"):
/// where the text that asks sits (an instruction over the page), not a word
/// of the element's name.
pub(super) fn without_where_asked(step: &str) -> &str {
    let bare = step.trim_end().trim_end_matches('.');
    ["below", "above"]
        .iter()
        .find_map(|w| {
            let head = bare.strip_suffix(w)?;
            let head = head.strip_suffix(' ')?;
            (head.split_whitespace().count() >= 2).then_some(head)
        })
        .unwrap_or(step)
}

/// The step's words that name the target: verbs, role words and filler out.
pub(super) fn target_words(text: &str, verb: &str) -> String {
    let lower = norm(text).replacen(verb, " ", 1);
    let mut words: Vec<&str> = lower
        .split_whitespace()
        .filter(|w| !FILLER.contains(w))
        .collect();
    while words.first().is_some_and(|w| JOINERS.contains(w)) {
        words.remove(0);
    }
    words.join(" ")
}

/// A word without its inflection ("wrapping", "colours", "opened").
pub(super) fn stem(w: &str) -> &str {
    if let Some(s) = w.strip_suffix("ing").filter(|s| s.len() > 2) {
        // "wrapping" → "wrap", "setting" → "set".
        let b = s.as_bytes();
        if b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2] {
            return &s[..s.len() - 1];
        }
        return s;
    }
    // "cancellation" → "cancell" (one letter from "cancel"), "confirmation"
    // → "confirm".
    if let Some(s) = w.strip_suffix("ation").filter(|s| s.len() > 3) {
        return s;
    }
    if let Some(s) = w.strip_suffix("ed").filter(|s| s.len() > 3) {
        return s;
    }
    w.strip_suffix('s').filter(|s| s.len() > 2).unwrap_or(w)
}

/// Whether two words are the same word, allowing one typo (a letter
/// missing, extra, wrong or two swapped) in words of five letters or more.
pub(super) fn same_word(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().min(b.len()) < 5 || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    // Optimal string alignment distance, at most 1.
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, row);
    }
    prev[b.len()] <= 1
}

/// `step` with its quoted strings (and their quote marks) blanked, byte for
/// byte, so that positions in it are positions in `step`.
pub(super) fn masked(step: &str, quotes: &[String]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_read_as_words_and_words_keep_their_stems() {
        assert_eq!(norm("☰"), "menu");
        assert_eq!(norm("Close ×"), "close close");
        assert_eq!(norm("+"), "add");
        assert_eq!(norm("a + b"), "a add b");
        assert_eq!(norm("C++"), "c", "a + inside a word is no sign");
        assert_eq!(
            quoted("Type 'ada' into \u{201c}User\u{201d}"),
            ["ada", "User"]
        );
        assert_eq!(quoted("Don't ask"), Vec::<String>::new());
        assert_eq!(stem("wrapping"), "wrap");
        assert_eq!(stem("cancellation"), "cancell");
        assert!(same_word(stem("cancellation"), stem("cancel")));
        assert!(same_word("servcie", "service"));
        assert!(!same_word("cat", "car"));
        assert_eq!(target_words("into the Username field", ""), "username");
    }
}
