//! The result budget (`max_result_tokens`): a bound on what a model reads of
//! one result, whatever the tool — a page's HTML, a long text, an HTTP body,
//! an imported tool's output.
//!
//! A result over the budget is cut at a structural boundary, never mid-token:
//! the part that holds most of it (the *body*: a string, an array or an
//! object, found by walking down while one child outweighs all the others) is
//! split into units — lines of a string, items of an array, entries of an
//! object — and the units are packed into pages that fit the budget with the
//! rest of the data around them. The caller gets page 1, its data the same
//! shape as the tool's (strings shorter, arrays shorter), and a
//! [`ResultCut`] that says what was left out and how to get it: its handle
//! names the call, whose whole result stays in history (under its retention
//! and masking rules), so [`page`] and [`search`] rebuild any page from there;
//! the MCP tool `axon_result_more` does that. Tokens are estimated
//! ([`crate::tokens`]).

use serde_json::Value;

pub use crate::result::cut::{CutUnit, ResultCut};
use crate::tokens;

/// Room kept for the notice a cut result carries (its text in an MCP result).
const NOTICE_TOKENS: u64 = 80;

/// The smallest budget a policy may set: a page must hold some of the result
/// next to its notice.
pub const MIN_MAX_RESULT_TOKENS: u64 = 200;

/// The largest: beyond it, no model reads the result anyway.
pub const MAX_MAX_RESULT_TOKENS: u64 = 10_000_000;

/// Why a page could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// Past the last page.
    #[error("page {page} is past the last page ({pages})")]
    PastTheEnd {
        /// The page asked for.
        page: usize,
        /// Pages in all.
        pages: usize,
    },
    /// Pages are counted from 1.
    #[error("pages are counted from 1")]
    Zero,
}

/// Cut `data` to `max_tokens` if it is over: its first page and what was
/// left out, or `None` when it fits.
pub fn cut(data: &Value, max_tokens: u64, handle: &str) -> Option<(Value, ResultCut)> {
    if max_tokens == 0 || upper_bound(data) <= max_tokens {
        return None;
    }
    let layout = Layout::of(data, max_tokens)?;
    layout.page(1, handle).ok()
}

/// `result` with its data cut to `max_tokens` when it is over (its
/// [`ResultCut`] in `cut`), handled by its call id.
pub fn bound(mut result: crate::CallResult, max_tokens: u64) -> crate::CallResult {
    if upper_bound(&result.data) <= max_tokens {
        return result;
    }
    let handle = format!("{}.{max_tokens}", result.call_id);
    if let Some((data, cut)) = cut(&result.data, max_tokens, &handle) {
        result.data = data;
        result.cut = Some(Box::new(cut));
    }
    result
}

/// The call id and budget a handle names (`<call_id>.<max_result_tokens>`).
pub fn parse_handle(handle: &str) -> Option<(&str, u64)> {
    let (call_id, budget) = handle.rsplit_once('.')?;
    let budget = budget.parse().ok()?;
    (!call_id.is_empty() && budget > 0).then_some((call_id, budget))
}

/// Page `n` (1-based) of `data` cut to `max_tokens`; a result that fits is
/// its only page.
pub fn page(
    data: &Value,
    max_tokens: u64,
    n: usize,
    handle: &str,
) -> Result<(Value, Option<ResultCut>), PageError> {
    match Layout::of(data, max_tokens) {
        None if n == 1 => Ok((data.clone(), None)),
        None if n == 0 => Err(PageError::Zero),
        None => Err(PageError::PastTheEnd { page: n, pages: 1 }),
        Some(layout) => layout.page(n, handle).map(|(v, c)| (v, Some(c))),
    }
}

/// The units of `data` (cut to `max_tokens`) that contain `query` (case
/// folded), as many as fit; `None` when the data fits whole.
pub fn search(
    data: &Value,
    max_tokens: u64,
    query: &str,
    handle: &str,
) -> Option<(Value, ResultCut)> {
    let layout = Layout::of(data, max_tokens)?;
    Some(layout.search(query, handle))
}

/// At least the estimate of `data`'s tokens (each token is a byte or more),
/// without reading its text: a result below the budget by this measure is
/// not estimated at all.
fn upper_bound(data: &Value) -> u64 {
    match data {
        Value::String(s) => s.len() as u64 + 1,
        Value::Array(items) => 1 + items.iter().map(|i| 1 + upper_bound(i)).sum::<u64>(),
        Value::Object(map) => {
            1 + map
                .iter()
                .map(|(k, v)| 2 + k.len() as u64 + upper_bound(v))
                .sum::<u64>()
        }
        other => other.to_string().len() as u64,
    }
}

/// Estimated tokens of `data` as a model reads it: strings by their text,
/// the JSON around them by its marks.
pub fn weight(data: &Value) -> u64 {
    match data {
        Value::String(s) => 1 + tokens::estimate(s),
        Value::Array(items) => 1 + items.iter().map(|i| 1 + weight(i)).sum::<u64>(),
        // A key costs a token more than its text: its quotes and colon merge
        // with the marks around them (`,"`, `":"`) into about one (within
        // 10 % of cl100k on compact JSON, axon-cli/tests/budget.rs).
        Value::Object(map) => {
            1 + map
                .iter()
                .map(|(k, v)| 1 + tokens::estimate(k) + weight(v))
                .sum::<u64>()
        }
        other => tokens::estimate(&other.to_string()),
    }
}

/// How a result over its budget is paged.
struct Layout {
    /// The data with the body emptied and other long strings shortened.
    frame: Value,
    /// Where the body is.
    at: String,
    unit: CutUnit,
    units: Vec<Unit>,
    /// Page boundaries: page `p` holds `units[starts[p-1]..starts[p]]`.
    starts: Vec<usize>,
    total: u64,
    also_cut: Vec<String>,
}

/// One unit of the body, with its cost.
struct Unit {
    value: UnitValue,
    tokens: u64,
}

enum UnitValue {
    Text(String),
    Item(Value),
    Entry(String, Value),
}

impl Layout {
    fn of(data: &Value, max_tokens: u64) -> Option<Layout> {
        let total = weight(data);
        if max_tokens == 0 || total <= max_tokens {
            return None;
        }
        let at = body_of(data);
        let mut frame = data.clone();
        let body = std::mem::replace(frame.pointer_mut(&at)?, Value::Null);
        let mut also_cut = Vec::new();
        shorten_others(
            &mut frame,
            max_tokens / 8,
            &mut String::new(),
            &mut also_cut,
        );
        let rest = weight(&frame) + NOTICE_TOKENS;
        let room = max_tokens.saturating_sub(rest).max(max_tokens / 4);
        let (unit, units) = split(body, room);
        let mut starts = vec![0];
        let mut used = 0;
        for (i, u) in units.iter().enumerate() {
            if used > 0 && used + u.tokens > room {
                starts.push(i);
                used = 0;
            }
            used += u.tokens;
        }
        starts.push(units.len());
        Some(Layout {
            frame,
            at,
            unit,
            units,
            starts,
            total,
            also_cut,
        })
    }

    fn pages(&self) -> usize {
        self.starts.len() - 1
    }

    fn page(&self, n: usize, handle: &str) -> Result<(Value, ResultCut), PageError> {
        if n == 0 {
            return Err(PageError::Zero);
        }
        if n > self.pages() {
            return Err(PageError::PastTheEnd {
                page: n,
                pages: self.pages(),
            });
        }
        let (from, to) = (self.starts[n - 1], self.starts[n]);
        let data = self.fill(self.units[from..to].iter());
        let cut = ResultCut {
            page: n,
            first: from + 1,
            last: to,
            ..self.cut_info(handle)
        };
        Ok((data, cut))
    }

    fn search(&self, query: &str, handle: &str) -> (Value, ResultCut) {
        let query = query.to_lowercase();
        let hits: Vec<usize> = self
            .units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.text().to_lowercase().contains(&query))
            .map(|(i, _)| i)
            .collect();
        let room = self.room();
        let mut used = 0;
        let shown: Vec<usize> = hits
            .iter()
            .copied()
            .take_while(|i| {
                used += self.units[*i].tokens;
                used <= room || used == self.units[*i].tokens
            })
            .collect();
        let data = self.fill(shown.iter().map(|i| &self.units[*i]));
        let cut = ResultCut {
            page: 0,
            first: shown.first().map_or(0, |i| i + 1),
            last: shown.last().map_or(0, |i| i + 1),
            matched: Some(shown.iter().map(|i| i + 1).collect()),
            matches: Some(hits.len()),
            ..self.cut_info(handle)
        };
        (data, cut)
    }

    /// What one page may hold: the largest page's worth.
    fn room(&self) -> u64 {
        self.starts
            .windows(2)
            .map(|w| self.units[w[0]..w[1]].iter().map(|u| u.tokens).sum::<u64>())
            .max()
            .unwrap_or(0)
    }

    fn cut_info(&self, handle: &str) -> ResultCut {
        ResultCut {
            handle: handle.to_string(),
            at: self.at.clone(),
            unit: self.unit,
            page: 0,
            pages: self.pages(),
            first: 0,
            last: 0,
            of: self.units.len(),
            total_tokens: self.total,
            matched: None,
            matches: None,
            also_cut: self.also_cut.clone(),
        }
    }

    /// The frame with `units` as its body.
    fn fill<'a>(&self, units: impl Iterator<Item = &'a Unit>) -> Value {
        let body = match self.unit {
            CutUnit::Lines => Value::String(
                units
                    .filter_map(|u| match &u.value {
                        UnitValue::Text(t) => Some(t.as_str()),
                        _ => None,
                    })
                    .collect(),
            ),
            CutUnit::Items => Value::Array(
                units
                    .filter_map(|u| match &u.value {
                        UnitValue::Item(v) => Some(v.clone()),
                        _ => None,
                    })
                    .collect(),
            ),
            CutUnit::Entries => Value::Object(
                units
                    .filter_map(|u| match &u.value {
                        UnitValue::Entry(k, v) => Some((k.clone(), v.clone())),
                        _ => None,
                    })
                    .collect(),
            ),
        };
        let mut data = self.frame.clone();
        if let Some(slot) = data.pointer_mut(&self.at) {
            *slot = body;
        }
        data
    }
}

impl Unit {
    /// The text a query is matched against.
    fn text(&self) -> std::borrow::Cow<'_, str> {
        match &self.value {
            UnitValue::Text(t) => t.into(),
            UnitValue::Item(v) => v.to_string().into(),
            UnitValue::Entry(k, v) => format!("{k}: {v}").into(),
        }
    }
}

/// The pointer to the part of `data` that holds most of it: walk down while
/// one child outweighs all its siblings together; a string is always the end.
fn body_of(data: &Value) -> String {
    let mut at = String::new();
    let mut node = data;
    loop {
        let children: Vec<(String, &Value)> = match node {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
            _ => return at,
        };
        let weights: Vec<u64> = children.iter().map(|(_, v)| weight(v)).collect();
        let all: u64 = weights.iter().sum();
        let Some((i, heaviest)) = weights.iter().enumerate().max_by_key(|(_, w)| **w) else {
            return at;
        };
        if *heaviest * 2 <= all {
            return at;
        }
        let (key, child) = &children[i];
        at.push('/');
        at.push_str(&key.replace('~', "~0").replace('/', "~1"));
        node = child;
    }
}

/// Shorten every string in `frame` over `limit` tokens (keeping its first
/// lines), noting where.
fn shorten_others(frame: &mut Value, limit: u64, at: &mut String, cut: &mut Vec<String>) {
    match frame {
        Value::String(s) if tokens::estimate(s) > limit => {
            let pieces = split_text(s, limit.max(1));
            let mut head = pieces.into_iter().next().unwrap_or_default();
            head.push('…');
            *s = head;
            cut.push(at.clone());
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                shorten_others(item, limit, at, cut);
                at.truncate(len);
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                shorten_others(v, limit, at, cut);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// The body as units of at most `room` tokens each where it can be split.
fn split(body: Value, room: u64) -> (CutUnit, Vec<Unit>) {
    match body {
        Value::Array(items) => (
            CutUnit::Items,
            items
                .into_iter()
                .map(|v| Unit {
                    tokens: 1 + weight(&v),
                    value: UnitValue::Item(v),
                })
                .collect(),
        ),
        Value::Object(map) => (
            CutUnit::Entries,
            map.into_iter()
                .map(|(k, v)| Unit {
                    tokens: 1 + tokens::estimate(&k) + weight(&v),
                    value: UnitValue::Entry(k, v),
                })
                .collect(),
        ),
        Value::String(s) => (
            CutUnit::Lines,
            split_text(&s, room)
                .into_iter()
                .map(|t| Unit {
                    tokens: tokens::estimate(&t),
                    value: UnitValue::Text(t),
                })
                .collect(),
        ),
        other => (
            CutUnit::Items,
            vec![Unit {
                tokens: weight(&other),
                value: UnitValue::Item(other),
            }],
        ),
    }
}

/// `text` as its lines (each keeps its newline), a line over `room` tokens
/// split after a tag's `>` or at a space, or anywhere when it has neither.
fn split_text(text: &str, room: u64) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.split_inclusive('\n') {
        let mut rest = line;
        while tokens::estimate(rest) > room {
            let end = fitting_prefix(rest, room);
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
        if !rest.is_empty() {
            out.push(rest.to_string());
        }
    }
    out
}

/// The length of the longest prefix of `line` within `room` tokens, ended at
/// a boundary a reader would stop at when there is one in its second half.
fn fitting_prefix(line: &str, room: u64) -> usize {
    // Each token is one to a few bytes: start from a guess and shrink.
    let mut end = floor_char(line, (room as usize * 3).max(1));
    while end > 1 && tokens::estimate(&line[..end]) > room {
        end = floor_char(line, end * 4 / 5);
    }
    let end = end.max(line.chars().next().map_or(1, char::len_utf8));
    let half = floor_char(line, end / 2);
    match line[half..end].rfind(['>', ' ']) {
        Some(i) => half + i + 1,
        None => end,
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page_text(n: usize) -> String {
        (1..=n)
            .map(|i| format!("- link \"Result number {i} about red shoes\" [ref=e{i}]\n"))
            .collect()
    }

    #[test]
    fn a_result_that_fits_is_left_alone() {
        let data = json!({"text": page_text(10)});
        assert!(cut(&data, 1_000, "h").is_none());
        assert!(cut(&data, 0, "h").is_none());
    }

    #[test]
    fn a_long_text_is_cut_at_lines_and_pages_walk_all_of_it() {
        let text = page_text(2_000);
        let data = json!({"url": "https://example.com/", "text": text});
        let (first, cut1) = cut(&data, 2_000, "c.2000").expect("over the budget");
        assert_eq!(first["url"], "https://example.com/");
        assert!(
            weight(&first) + NOTICE_TOKENS <= 2_000,
            "{}",
            weight(&first)
        );
        assert_eq!(
            (cut1.at.as_str(), cut1.unit, cut1.page),
            ("/text", CutUnit::Lines, 1)
        );
        assert!(
            first["text"].as_str().unwrap().ends_with('\n'),
            "whole lines"
        );
        // Every page fits, and the pages together are the text, in order.
        let mut whole = String::new();
        for n in 1..=cut1.pages {
            let (data, c) = page(&data, 2_000, n, "c.2000").unwrap();
            let c = c.unwrap();
            assert!(weight(&data) + NOTICE_TOKENS <= 2_000);
            assert_eq!(c.first, whole.lines().count() + 1);
            whole.push_str(data["text"].as_str().unwrap());
        }
        assert_eq!(whole, text);
        assert_eq!(
            page(&data, 2_000, cut1.pages + 1, "c"),
            Err(PageError::PastTheEnd {
                page: cut1.pages + 1,
                pages: cut1.pages
            })
        );
        assert!(cut1.notice().contains("\"page\": 2"), "{}", cut1.notice());
    }

    #[test]
    fn an_array_is_cut_by_items_and_a_query_finds_the_matching_ones() {
        let items: Vec<Value> = (0..3_000)
            .map(|i| json!({"id": i, "name": format!("item {i}")}))
            .collect();
        let data = Value::Array(items);
        let (first, c) = cut(&data, 1_000, "h").unwrap();
        assert_eq!((c.at.as_str(), c.unit), ("", CutUnit::Items));
        assert_eq!(first[0]["id"], 0);
        assert!(first.as_array().unwrap().len() < 3_000);
        let (found, c) = search(&data, 1_000, "ITEM 2999", "h").unwrap();
        assert_eq!(found, json!([{"id": 2999, "name": "item 2999"}]));
        assert_eq!((c.matches, c.matched), (Some(1), Some(vec![3000])));
    }

    #[test]
    fn a_page_of_html_on_one_line_is_split_after_tags() {
        let html = "<div><p>Some words in a paragraph</p></div>".repeat(5_000);
        let data = json!({"html": html});
        let (first, _) = cut(&data, 1_000, "h").unwrap();
        let shown = first["html"].as_str().unwrap();
        assert!(shown.ends_with('>'), "{}", &shown[shown.len() - 20..]);
        assert!(weight(&first) <= 1_000);
    }

    #[test]
    fn other_long_strings_are_shortened_and_named() {
        let data =
            json!({"body": "word ".repeat(40_000), "headers": "x-header: value\n".repeat(2_000)});
        let (first, c) = cut(&data, 4_000, "h").unwrap();
        assert_eq!(c.at, "/body");
        assert_eq!(c.also_cut, vec!["/headers".to_string()]);
        assert!(first["headers"].as_str().unwrap().ends_with('…'));
        assert!(weight(&first) <= 4_000, "{}", weight(&first));
    }

    #[test]
    fn multi_byte_text_is_never_split_inside_a_character() {
        let data = json!({"text": "東京の天気は晴れです".repeat(3_000)});
        let (first, c) = cut(&data, 500, "h").unwrap();
        assert!(c.pages > 1);
        assert!(!first["text"].as_str().unwrap().is_empty());
    }
}
