//! A date picked on a calendar drawn on the page (a date picker's open grid:
//! Quasar's `QDate`, MUI's, jQuery UI's, react-datepicker): "Set the
//! check-in date to 2027-01-24", "Pick 14 February 2027". One step is one
//! action, so the rule clicks the day only when the calendar shows the
//! step's month; otherwise it refuses and names the button that moves the
//! calendar (the agent clicks it, then asks again) — a click on "24" of the
//! wrong month would be a wrong date reported as picked.
//!
//! What counts as a calendar: at least 28 distinct day numbers ("1" … "31")
//! as buttons, cells or options, or days named with their full date
//! ("Sunday, January 24, 2027", as react-datepicker and MUI label them).
//! The month shown is read from the names around the grid: a month name
//! alone ("January", next to a year "2027") or with its year
//! ("January 2027"). A page that shows two months (a range picker with bare
//! day numbers) cannot say which "24" is meant: `ambiguous_step`.

use super::dates::{Found, MONTHS, find, month_of};
use super::*;

/// Roles a day of a calendar is drawn with.
const DAY_ROLES: [&str; 6] = ["button", "gridcell", "cell", "option", "link", "generic"];

/// Roles that list months or years to choose from rather than show the
/// current one (a month drop-down's options).
const LISTED: [&str; 3] = ["option", "menuitem", "listitem"];

/// A month's name as a calendar shows it ("January"), from `dates.rs`'s
/// list; `month` is 1–12.
fn month_name(month: u32) -> String {
    let at = usize::try_from(month.saturating_sub(1))
        .unwrap_or(0)
        .min(11);
    let mut name = MONTHS[at].to_string();
    name[..1].make_ascii_uppercase();
    name
}

/// A year and a month (1–12).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Month {
    year: u32,
    month: u32,
}

impl Month {
    fn index(self) -> i64 {
        i64::from(self.year) * 12 + i64::from(self.month)
    }

    fn name(self) -> String {
        format!("{} {}", month_name(self.month), self.year)
    }
}

/// The step's date: its month and its day.
fn wanted(found: &Found) -> Option<(Month, u32)> {
    let mut parts = found.iso.split('-').map(|p| p.parse::<u32>().ok());
    let (year, month, day) = (parts.next()??, parts.next()??, parts.next()??);
    Some((Month { year, month }, day))
}

fn day_number(node: &SnapshotNode) -> Option<u32> {
    let name = node.name.trim();
    (name.len() <= 2)
        .then(|| name.parse::<u32>().ok())
        .flatten()
        .filter(|d| (1..=31).contains(d))
}

fn is_day(node: &SnapshotNode) -> bool {
    node.reference.is_some() && DAY_ROLES.contains(&node.role.as_str())
}

/// The month and the year the calendar shows, read from its header: `None`
/// where no month is shown, `Err` where several are.
fn shown(nodes: &[SnapshotNode]) -> Result<Option<Month>, Vec<String>> {
    let mut months: Vec<u32> = Vec::new();
    let mut years: Vec<u32> = Vec::new();
    let add = |list: &mut Vec<u32>, v: u32| {
        if !list.contains(&v) {
            list.push(v);
        }
    };
    for n in nodes.iter().filter(|n| !LISTED.contains(&n.role.as_str())) {
        for text in [Some(n.name.as_str()), n.value.as_deref()]
            .into_iter()
            .flatten()
        {
            let words: Vec<&str> = text.split_whitespace().collect();
            let year = |w: &str| {
                w.parse::<u32>()
                    .ok()
                    .filter(|y| w.len() == 4 && (1900..=2199).contains(y))
            };
            match words.as_slice() {
                [m] if m.len() >= 3 => {
                    if let Some(m) = month_of(m) {
                        add(&mut months, m);
                    } else if let Some(y) = year(m) {
                        add(&mut years, y);
                    }
                }
                [m, y] if m.len() >= 3 => {
                    if let (Some(m), Some(y)) = (month_of(m), year(y)) {
                        add(&mut months, m);
                        add(&mut years, y);
                    }
                }
                _ => {}
            }
        }
    }
    match (months.as_slice(), years.as_slice()) {
        ([], _) => Ok(None),
        ([month], [year]) => Ok(Some(Month {
            year: *year,
            month: *month,
        })),
        _ => Err(months
            .iter()
            .map(|m| month_name(*m))
            .chain(years.iter().map(u32::to_string))
            .collect()),
    }
}

/// The days of the month shown, in order: the run of numbers rising by one
/// from a "1" that is a whole month (28 days or more; a grid that also draws
/// the last days of the month before and the first of the month after
/// leaves them out). Empty when there is no such run, or several (two
/// months' days on the page at once, as while one slides in over the
/// other): which "14" is meant cannot be told.
fn this_months_days(nodes: &[SnapshotNode]) -> Vec<&SnapshotNode> {
    let days: Vec<&SnapshotNode> = nodes
        .iter()
        .filter(|n| is_day(n) && day_number(n).is_some())
        .collect();
    let mut months: Vec<Vec<&SnapshotNode>> = Vec::new();
    let mut run: Vec<&SnapshotNode> = Vec::new();
    for n in days {
        let d = day_number(n);
        let follows = run.last().and_then(|l| day_number(l)).map(|l| l + 1) == d;
        if !follows {
            if run.len() >= 28 {
                months.push(std::mem::take(&mut run));
            }
            run.clear();
            if d != Some(1) {
                continue;
            }
        }
        run.push(n);
    }
    if run.len() >= 28 {
        months.push(run);
    }
    match <[_; 1]>::try_from(months) {
        Ok([month]) => month,
        Err(_) => Vec::new(),
    }
}

/// The button that moves the calendar toward `to` from `from`.
fn mover(nodes: &[SnapshotNode], from: Month, to: Month) -> Option<&SnapshotNode> {
    let later = to.index() > from.index();
    let words: &[&str] = if later {
        &["next", "forward", "›", "»", ">"]
    } else {
        &["previous", "prev", "back", "‹", "«", "<"]
    };
    let buttons = || {
        nodes
            .iter()
            .filter(|n| n.reference.is_some() && n.role == "button")
    };
    let says = |n: &SnapshotNode, unit: &str| {
        let lower = n.name.to_lowercase();
        words.iter().any(|w| lower.contains(w)) && lower.contains(unit)
    };
    buttons()
        .find(|n| says(n, "month"))
        .or_else(|| buttons().find(|n| says(n, "")))
}

/// "Set the check-in date to 2027-01-24" on a page with a calendar open:
/// the day's click, or a refusal saying how to show its month. `None` when
/// the step has no date or the page no calendar.
pub(super) fn pick(nodes: &[SnapshotNode], step: &str) -> Option<Result<Decision, ToolError>> {
    let found = find(step).filter(|f| !f.is_time)?;
    let (month, day) = wanted(&found)?;
    // Days named with their date: the one of the step's date, if shown.
    let dated: Vec<&SnapshotNode> = nodes
        .iter()
        .filter(|n| is_day(n) && n.name.chars().any(|c| c.is_ascii_alphabetic()))
        .filter(|n| find(&n.name).is_some_and(|f| !f.is_time))
        .collect();
    if let Some(node) = dated
        .iter()
        .find(|n| find(&n.name).is_some_and(|f| f.iso == found.iso))
    {
        return Some(click_day(node, &found.iso, &node.name));
    }
    let numbered = nodes
        .iter()
        .filter(|n| is_day(n))
        .filter_map(day_number)
        .fold(Vec::new(), |mut seen, d| {
            if !seen.contains(&d) {
                seen.push(d);
            }
            seen
        });
    if dated.len() < 28 && numbered.len() < 28 {
        return None;
    }
    let wanted_name = month.name();
    let shown = match shown(nodes) {
        Ok(Some(shown)) => shown,
        Ok(None) => {
            return Some(Err(fail(
                "ambiguous_step",
                format!(
                    "the calendar does not say which month it shows, so day {day} may not be {}: read the page or click the day by its ref",
                    found.iso
                ),
            )));
        }
        Err(several) => {
            return Some(Err(fail(
                "ambiguous_step",
                format!(
                    "the page shows several months or years ({}); say which calendar, or click the day by its ref",
                    several.join(", ")
                ),
            )));
        }
    };
    if shown != month {
        let by = (month.index() - shown.index()).abs();
        let Some(button) = mover(nodes, shown, month) else {
            return Some(Err(fail(
                "element_not_found",
                format!(
                    "the calendar shows {}, not {wanted_name}, and no button moves it",
                    shown.name()
                ),
            )));
        };
        let times = if by == 1 {
            "once".into()
        } else {
            format!("{by} times")
        };
        return Some(Err(fail(
            "element_not_found",
            format!(
                "the calendar shows {}, not {wanted_name}: click {:?} {times}, then pick {day}",
                shown.name(),
                button.name
            ),
        )
        .with_candidates(crate::candidates::of(nodes, &[button]))));
    }
    let days = this_months_days(nodes);
    if days.len() < 28 {
        return Some(Err(fail(
            "ambiguous_step",
            format!(
                "the calendar shows {wanted_name} but its days do not run from 1 to the month's end (two months' days, or days without numbers): click the day by its ref"
            ),
        )));
    }
    let Some(node) = days.iter().find(|n| day_number(n) == Some(day)) else {
        return Some(Err(fail(
            "element_not_found",
            format!("{wanted_name} on the page has no day {day}"),
        )));
    };
    Some(click_day(node, &found.iso, &wanted_name))
}

fn click_day(node: &SnapshotNode, iso: &str, shown: &str) -> Result<Decision, ToolError> {
    if node.states.iter().any(|s| s == "disabled") {
        return Err(fail(
            "disabled",
            format!("{iso} cannot be picked: its day in the calendar is disabled"),
        ));
    }
    decision(
        on(node, ActionKind::Click, None),
        0.9,
        format!(
            "Click {} {:?} in the calendar ({shown}): {iso}",
            node.role, node.name
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: &str, name: &str, r: &str) -> SnapshotNode {
        SnapshotNode::element(role, name, r)
    }

    /// Quasar's QDate: a header of buttons, then the days of the month.
    fn qdate(month: &str, days: u32, leading: &[u32]) -> Vec<SnapshotNode> {
        let mut page = vec![
            node("textbox", "Guest name", "e1"),
            node("button", "Previous month", "e2"),
            node("button", month, "e3"),
            node("button", "Next month", "e4"),
            node("button", "Previous year", "e5"),
            node("button", "2027", "e6"),
            node("button", "Next year", "e7"),
        ];
        for (i, d) in leading
            .iter()
            .chain(&(1..=days).collect::<Vec<_>>())
            .enumerate()
        {
            page.push(node("button", &d.to_string(), &format!("d{i}")));
        }
        page
    }

    fn picked(step: &str, page: &[SnapshotNode]) -> Result<String, (String, String)> {
        match pick(page, step).expect("a calendar step") {
            Ok(d) => Ok(d.action.args.reference.unwrap_or_default()),
            Err(e) => Err((e.code.unwrap_or_default(), e.message)),
        }
    }

    #[test]
    fn the_day_is_clicked_when_the_calendar_shows_its_month() {
        let page = qdate("January", 31, &[]);
        assert_eq!(
            picked("Set the Check-in date to 2027-01-24", &page),
            Ok("d23".into())
        );
        assert_eq!(picked("Pick 5 January 2027", &page), Ok("d4".into()));
        // Days of the month before, drawn ahead of the 1st, are not its days.
        let page = qdate("February", 28, &[30, 31]);
        assert_eq!(picked("Choose 02/28/2027", &page), Ok("d29".into()));
        assert_eq!(picked("Choose February 1, 2027", &page), Ok("d2".into()));
    }

    #[test]
    fn another_month_is_refused_naming_the_button_that_shows_it() {
        let page = qdate("January", 31, &[]);
        let (code, message) = picked("Pick 2027-02-14", &page).expect_err("another month");
        assert_eq!(code, "element_not_found");
        assert!(
            message.contains("shows January 2027, not February 2027"),
            "{message}"
        );
        assert!(message.contains("\"Next month\" once"), "{message}");
        let (_, message) = picked("Pick 2026-11-14", &page).expect_err("earlier");
        assert!(message.contains("\"Previous month\" 2 times"), "{message}");
    }

    #[test]
    fn a_calendar_that_does_not_say_its_month_or_shows_two_is_ambiguous() {
        let mut page = qdate("January", 31, &[]);
        page.retain(|n| n.name != "January");
        assert_eq!(
            picked("Pick 2027-01-24", &page).map_err(|e| e.0),
            Err("ambiguous_step".into())
        );
        let mut page = qdate("January 2027", 31, &[]);
        page.push(node("text", "February 2027", ""));
        assert_eq!(
            picked("Pick 2027-01-24", &page).map_err(|e| e.0),
            Err("ambiguous_step".into())
        );
    }

    #[test]
    fn two_months_of_days_at_once_are_ambiguous() {
        // The old month still sliding out while the new one slides in.
        let mut page = qdate("February", 31, &[]);
        for d in 1..=28 {
            page.push(node("button", &d.to_string(), &format!("n{d}")));
        }
        assert_eq!(
            picked("Pick 2027-02-14", &page).map_err(|e| e.0),
            Err("ambiguous_step".into())
        );
    }

    #[test]
    fn days_named_with_their_date_are_picked_by_it() {
        let mut page = vec![node("button", "Previous Month", "p")];
        for d in 1..=31 {
            page.push(node(
                "gridcell",
                &format!("Choose Sunday, January {d}th, 2027"),
                &format!("d{d}"),
            ));
        }
        assert_eq!(picked("Pick January 24, 2027", &page), Ok("d24".into()));
    }

    #[test]
    fn no_calendar_no_reading_and_disabled_days_are_refused() {
        let page = vec![node("button", "24", "e1"), node("button", "Save", "e2")];
        assert!(pick(&page, "Pick 2027-01-24").is_none());
        let mut page = qdate("January", 31, &[]);
        if let Some(d) = page.iter_mut().find(|n| n.name == "24") {
            d.states.push("disabled".into());
        }
        assert_eq!(
            picked("Pick 2027-01-24", &page).map_err(|e| e.0),
            Err("disabled".into())
        );
    }
}
