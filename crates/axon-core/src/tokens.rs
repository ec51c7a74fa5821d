//! How many tokens a model reads in a text: an estimate, for bounding results
//! (`max_result_tokens`, policy/result_budget.rs) without shipping a tokenizer.
//!
//! Byte-pair tokenizers (OpenAI's cl100k, Llama's, Claude's) first split text
//! into pieces — a word with the space before it, up to three digits, a run of
//! punctuation, a run of whitespace — and then merge each piece's bytes into
//! known tokens. A common word is one token; a long or rare one a few; text in
//! scripts outside Latin costs about a token per character. This estimate does
//! the same split and prices each piece with those rules:
//!
//! - a word of ASCII letters (with the one space or mark before it): 1 token up
//!   to 8 letters, one more per 4 letters after that;
//! - a word in other scripts: ½ token per character below U+0800 (accented
//!   Latin, Greek, Cyrillic, Arabic, Hebrew), 1.2 per character above (CJK,
//!   emoji);
//! - digits: 1 token per 3;
//! - punctuation: 1 token per 2 marks;
//! - a run of whitespace or newlines: 1 token.
//!
//! Measured against cl100k (tiktoken) on a page's HTML, a snapshot, prose,
//! source code, JSON and mixed-script text, it was within 8 % of the real
//! count on each (docs/design.md, "Result budget"; a test in
//! axon-mcp/tests/budget.rs checks it against tiktoken on texts it did not
//! see while the rules were chosen).

/// What kind of character starts or continues a piece.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Digit,
    Newline,
    Space,
    Mark,
}

fn class(c: char) -> Class {
    if c.is_alphabetic() {
        Class::Letter
    } else if c.is_numeric() {
        Class::Digit
    } else if c == '\n' || c == '\r' {
        Class::Newline
    } else if c.is_whitespace() {
        Class::Space
    } else {
        Class::Mark
    }
}

/// The estimated number of tokens a model reads in `text`.
pub fn estimate(text: &str) -> u64 {
    let chars: Vec<(Class, char)> = text.chars().map(|c| (class(c), c)).collect();
    let mut tenths: u64 = 0;
    let mut i = 0;
    while i < chars.len() {
        let (first, _) = chars[i];
        let next = chars.get(i + 1).map(|(k, _)| *k);
        let run = |from: usize, what: &dyn Fn(Class) -> bool| {
            from + chars[from..].iter().take_while(|(k, _)| what(*k)).count()
        };
        if first == Class::Letter
            || (matches!(first, Class::Space | Class::Mark) && next == Some(Class::Letter))
        {
            // A word, with the space or mark before it.
            let start = if first == Class::Letter { i } else { i + 1 };
            let end = run(start, &|k| k == Class::Letter);
            tenths += word(chars[start..end].iter().map(|(_, c)| *c));
            i = end;
        } else if first == Class::Digit {
            let end = run(i, &|k| k == Class::Digit);
            tenths += 10 * (end - i).div_ceil(3) as u64;
            i = end;
        } else if first == Class::Mark || (first == Class::Space && next == Some(Class::Mark)) {
            let end = run(i + 1, &|k| k == Class::Mark);
            tenths += 10 * (end - i).div_ceil(2) as u64;
            i = end;
        } else {
            let end = run(i, &|k| matches!(k, Class::Space | Class::Newline));
            tenths += 10;
            i = end;
        }
    }
    tenths.div_ceil(10)
}

/// A word's cost in tenths of a token.
fn word(letters: impl Iterator<Item = char> + Clone) -> u64 {
    if letters.clone().all(|c| c.is_ascii()) {
        let n = letters.count() as u64;
        return if n <= 8 {
            10
        } else {
            10 + 10 * (n - 8).div_ceil(4)
        };
    }
    letters
        .map(|c| if (c as u32) < 0x800 { 5 } else { 12 })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_digits_marks_and_spaces_are_priced_as_pieces() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("hello"), 1);
        assert_eq!(estimate("hello world"), 2);
        // 13 letters: one token, then one per 4 past the 8th.
        assert_eq!(estimate("internationals"), 3);
        assert_eq!(estimate("1234567"), 3);
        assert_eq!(estimate("\"},"), 2);
        assert_eq!(estimate("a\n\n  b"), 3);
        // Other scripts cost by the character.
        assert_eq!(estimate("東京"), 3);
        assert_eq!(estimate("мир"), 2);
    }

    #[test]
    fn a_snapshot_line_costs_what_a_tokenizer_charges() {
        // cl100k gives 12 for this line (tiktoken, docs/design.md).
        let n = estimate("- button \"Add to cart\" [ref=e12]");
        assert!((10..=13).contains(&n), "{n}");
    }
}
