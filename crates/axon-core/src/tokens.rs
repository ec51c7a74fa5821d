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
//! axon-cli/tests/budget.rs checks it against tiktoken on texts it did not
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
    let mut chars = text.chars().peekable();
    let mut tenths: u64 = 0;
    while let Some(c) = chars.next() {
        let first = class(c);
        let next = chars.peek().copied().map(class);
        // Take the characters that follow while they are of `kind`; how many.
        let mut take = |kind: &dyn Fn(Class) -> bool, word: &mut Word| {
            let mut n: u64 = 0;
            while let Some(&c) = chars.peek().filter(|c| kind(class(**c))) {
                word.push(c);
                chars.next();
                n += 1;
            }
            n
        };
        let mut word = Word::default();
        if first == Class::Letter
            || (matches!(first, Class::Space | Class::Mark) && next == Some(Class::Letter))
        {
            // A word, with the space or mark before it.
            if first == Class::Letter {
                word.push(c);
            }
            take(&|k| k == Class::Letter, &mut word);
            tenths += word.tenths();
        } else if first == Class::Digit {
            let n = 1 + take(&|k| k == Class::Digit, &mut word);
            tenths += 10 * n.div_ceil(3);
        } else if first == Class::Mark || (first == Class::Space && next == Some(Class::Mark)) {
            let n = 1 + take(&|k| k == Class::Mark, &mut word);
            tenths += 10 * n.div_ceil(2);
        } else {
            take(&|k| matches!(k, Class::Space | Class::Newline), &mut word);
            tenths += 10;
        }
    }
    tenths.div_ceil(10)
}

/// The letters of one word, priced as they come.
#[derive(Default)]
struct Word {
    letters: u64,
    ascii: bool,
    /// Tenths of a token, were the word not all ASCII.
    other: u64,
    started: bool,
}

impl Word {
    fn push(&mut self, c: char) {
        self.ascii = (self.ascii || !self.started) && c.is_ascii();
        self.started = true;
        self.letters += 1;
        self.other += if (c as u32) < 0x800 { 5 } else { 12 };
    }

    /// The word's cost in tenths of a token.
    fn tenths(&self) -> u64 {
        match (self.ascii || !self.started, self.letters) {
            (true, n) if n <= 8 => 10,
            (true, n) => 10 + 10 * (n - 8).div_ceil(4),
            (false, _) => self.other,
        }
    }
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
