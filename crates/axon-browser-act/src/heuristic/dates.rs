//! Dates and times in a step ("10/20/2017", "20 October 2017", "2:30 pm"),
//! and the field they go into. A date or time field (`date`, `time`) takes
//! the ISO form Chromium's input wants (`2017-10-20`, `14:30`); a text field
//! backed by a date picker takes the text as written.
//!
//! Readings: `yyyy-mm-dd` and `yyyy/mm/dd`; with slashes, month first
//! (`10/20/2017`, the US order) unless the first number cannot be a month
//! (`20/10/2017`); with dots or dashes, day first (`31.12.2026`,
//! `31-12-2026`); month names in English, full or cut to three letters, in
//! either order (`20 October 2017`, `March 5, 2026`). Times: `14:30`,
//! `2:30 pm`, `9:05 AM`, `2 pm`.

use super::*;

pub(super) const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A date or a time found in a step: where it is, as written, and its ISO
/// form.
#[derive(Debug, PartialEq)]
pub(super) struct Found {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) written: String,
    pub(super) iso: String,
    pub(super) is_time: bool,
}

pub(super) fn month_of(word: &str) -> Option<u32> {
    let w = word.trim_end_matches(['.', ',']).to_ascii_lowercase();
    if w.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| {
            *m == w || (w.len() == 3 && m.starts_with(&w)) || (w == "sept" && *m == "september")
        })
        .and_then(|i| u32::try_from(i + 1).ok())
}

fn valid(y: u32, m: u32, d: u32) -> Option<String> {
    let days = match m {
        2 if y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return None,
    };
    ((1000..=9999).contains(&y) && (1..=days).contains(&d)).then(|| format!("{y:04}-{m:02}-{d:02}"))
}

/// A numeric date token (`10/20/2017`, `2017-10-20`, `31.12.2026`).
fn numeric_date(token: &str) -> Option<String> {
    let sep = ['/', '.', '-'].into_iter().find(|s| token.contains(*s))?;
    let parts: Vec<&str> = token.split(sep).collect();
    let [a, b, c] = parts.as_slice() else {
        return None;
    };
    let n = |s: &str| {
        s.parse::<u32>()
            .ok()
            .filter(|_| !s.is_empty() && s.len() <= 4)
    };
    let (a_n, b_n, c_n) = (n(a)?, n(b)?, n(c)?);
    if a.len() == 4 {
        return valid(a_n, b_n, c_n);
    }
    if c.len() != 4 {
        return None;
    }
    match sep {
        // Month first, unless the first number cannot be a month.
        '/' if a_n > 12 => valid(c_n, b_n, a_n),
        '/' => valid(c_n, a_n, b_n),
        _ => valid(c_n, b_n, a_n),
    }
}

/// A time in `words` from `i`: `14:30`, `2:30 pm`, `2pm`, `9:05 a.m.`; the
/// ISO form and how many words it took.
fn time_at(words: &[&str], i: usize) -> Option<(String, usize)> {
    let w = words[i].trim_end_matches(['.', ',']).to_ascii_lowercase();
    let (clock, mut half) = match w.strip_suffix("pm").or_else(|| w.strip_suffix("am")) {
        Some(c) if !c.is_empty() => (c.to_string(), Some(w.ends_with("pm"))),
        _ => (w.clone(), None),
    };
    let mut used = 1;
    if half.is_none()
        && let Some(next) = words.get(i + 1)
    {
        let next = next.trim_end_matches(',').to_ascii_lowercase();
        match next.as_str() {
            "pm" | "p.m." | "p.m" => half = Some(true),
            "am" | "a.m." | "a.m" => half = Some(false),
            _ => {}
        }
        if half.is_some() {
            used = 2;
        }
    }
    let (h, m) = match clock.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        None if half.is_some() => (clock.parse::<u32>().ok()?, 0),
        _ => return None,
    };
    if m > 59 {
        return None;
    }
    let h = match half {
        Some(pm) if (1..=12).contains(&h) => h % 12 + if pm { 12 } else { 0 },
        Some(_) => return None,
        None if h <= 23 => h,
        None => return None,
    };
    Some((format!("{h:02}:{m:02}"), used))
}

/// The first date or time in `step`.
pub(super) fn find(step: &str) -> Option<Found> {
    // Word spans with their byte offsets.
    let spans: Vec<(usize, &str)> = step
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - step.as_ptr() as usize, w))
        .collect();
    let words: Vec<&str> = spans
        .iter()
        .map(|(_, w)| w.trim_matches(|c: char| "'\"“”‘’(),;".contains(c)))
        .collect();
    let found = |i: usize, used: usize, iso: String, is_time: bool| {
        let start = spans[i].0 + spans[i].1.find(words[i]).unwrap_or(0);
        let (last_at, last) = spans[i + used - 1];
        let last_word = words[i + used - 1];
        let end = last_at + last.find(last_word).unwrap_or(0) + last_word.len();
        let end = if step[..end].ends_with(['.', ',']) {
            end - 1
        } else {
            end
        };
        Some(Found {
            start,
            end,
            written: step[start..end].to_string(),
            iso,
            is_time,
        })
    };
    for i in 0..words.len() {
        let w = words[i].trim_end_matches(['.', ',']);
        if let Some(iso) = numeric_date(w) {
            return found(i, 1, iso, false);
        }
        // "20 October 2017", "October 20, 2017".
        if i + 2 < words.len() {
            let (x, y, z) = (
                w,
                words[i + 1].trim_end_matches(','),
                words[i + 2].trim_end_matches('.'),
            );
            let year = z.parse::<u32>().ok().filter(|_| z.len() == 4);
            let day = |s: &str| {
                s.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                    .parse::<u32>()
                    .ok()
            };
            if let Some(year) = year {
                let iso = match (day(x), month_of(y), month_of(x), day(y)) {
                    (Some(d), Some(m), _, _) => valid(year, m, d),
                    (_, _, Some(m), Some(d)) => valid(year, m, d),
                    _ => None,
                };
                if let Some(iso) = iso {
                    return found(i, 3, iso, false);
                }
            }
        }
        if let Some((iso, used)) = time_at(&words, i) {
            return found(i, used, iso, true);
        }
    }
    None
}

/// Whether a text field's name says it takes a date or a time (a picker's
/// placeholder "mm/dd/yyyy", "Arrival date").
pub(super) fn names_a_date(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["date", "time", "mm/dd", "dd/mm", "yyyy", "dd.mm"]
        .iter()
        .any(|w| lower.contains(w))
}

/// The value to type into `node` for `found`: ISO for a date or time field,
/// the text as written for a text field.
pub(super) fn value_for(node: &SnapshotNode, found: &Found) -> String {
    match node.role.as_str() {
        "date" | "time" | "datetime" => found.iso.clone(),
        _ => found.written.clone(),
    }
}

/// Roles a date or time is typed into.
const DATE_ROLES: [&str; 5] = ["date", "time", "datetime", "textbox", "combobox"];

/// "Type 10/20/2017 into the date field", "Departure: 20 October 2017",
/// "Pick-up at 2:30 pm": a step with a date or time, on a page with date or
/// time fields (a date input, or a text field whose name says date or
/// time), types it into the field the step's other words name (or the only
/// such field), in the form the field takes. `None` when the step has no
/// date or time or the page no such field.
pub(super) fn fill(nodes: &[SnapshotNode], step: &str) -> Option<Result<Decision, ToolError>> {
    let found = find(step)?;
    let fits = |n: &&SnapshotNode| {
        n.reference.is_some()
            && DATE_ROLES.contains(&n.role.as_str())
            && if found.is_time {
                n.role == "time" || n.role == "datetime" || n.name.to_lowercase().contains("time")
            } else {
                n.role == "date" || n.role == "datetime" || names_a_date(&n.name)
            }
    };
    let fields: Vec<SnapshotNode> = nodes.iter().filter(fits).cloned().collect();
    if fields.is_empty() {
        return None;
    }
    let rest = format!("{} {}", &step[..found.start], &step[found.end..]);
    let words = target_words(&rest, "");
    let words: Vec<&str> = words
        .split_whitespace()
        .filter(|w| !VERBS.iter().any(|(v, _)| v == w) && !JOINERS.contains(w))
        .filter(|w| !matches!(*w, "date" | "time" | "at" | "picker"))
        .collect();
    let field = words.join(" ");
    let picked = match (best(&fields, &field, &DATE_ROLES, None), fields.as_slice()) {
        (Ok((node, score)), _) if !field.is_empty() => (node.clone(), score),
        (_, [only]) => (only.clone(), 0.7),
        (Err(e), _) => return Some(Err(e)),
        (Ok(_), _) => {
            return Some(Err(fail(
                "ambiguous_step",
                format!(
                    "{:?} fits several date fields; name the field in {step:?}",
                    found.written
                ),
            )));
        }
    };
    let (node, score) = picked;
    let value = value_for(&node, &found);
    Some(decision(
        on(&node, ActionKind::Type, Some(value.clone())),
        score,
        format!(
            "Type {value:?} into {} {:?} (a date or time)",
            node.role, node.name
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iso(step: &str) -> Option<String> {
        find(step).map(|f| f.iso)
    }

    #[test]
    fn dates_read_in_the_orders_people_write_them() {
        assert_eq!(
            iso("Type 10/20/2017 into the date field").as_deref(),
            Some("2017-10-20")
        );
        assert_eq!(iso("on 20/10/2017").as_deref(), Some("2017-10-20"));
        assert_eq!(
            iso("Set departure to 31.12.2026").as_deref(),
            Some("2026-12-31")
        );
        assert_eq!(
            iso("Enter 2026-07-01 as the date").as_deref(),
            Some("2026-07-01")
        );
        assert_eq!(
            iso("Departure: 20 October 2017").as_deref(),
            Some("2017-10-20")
        );
        assert_eq!(
            iso("Choose March 5, 2026 as the date").as_deref(),
            Some("2026-03-05")
        );
        assert_eq!(iso("the 3rd of nothing"), None);
        assert_eq!(iso("13/13/2020"), None);
        assert_eq!(iso("02/30/2024"), None);
        assert_eq!(iso("02/29/2024").as_deref(), Some("2024-02-29"));
        let f = find("Type '10/20/2017' into it").expect("a date");
        assert_eq!(f.written, "10/20/2017");
    }

    #[test]
    fn times_read_with_and_without_a_half_of_the_day() {
        assert_eq!(
            iso("Set the pick-up time to 14:30").as_deref(),
            Some("14:30")
        );
        assert_eq!(iso("Pick-up at 2:30 pm").as_deref(), Some("14:30"));
        assert_eq!(iso("Type 9:05 AM into the time").as_deref(), Some("09:05"));
        assert_eq!(iso("at 12 am").as_deref(), Some("00:00"));
        assert_eq!(iso("at 12pm").as_deref(), Some("12:00"));
        assert_eq!(iso("at 25:00"), None);
        assert_eq!(iso("page 2 of 3"), None);
    }
}
