//! Custom drop-downs as first-class as a `<select>`: `browser_select_option`
//! on an element that is not a `<select>` — an ARIA combobox with a listbox
//! popup (what most component libraries draw), a listbox, an `<input list>`
//! — opens it with a real click, waits for the option named (the same node
//! on two looks, so that a popup its framework draws again is not clicked
//! half-way), clicks it as a person would, and confirms the widget shows it.
//!
//! Never the nearest match: the option's name must equal the value asked
//! (case and spaces aside), one option only; a value the widget does not
//! show after the click fails `value_not_shown` rather than report a
//! selection the page never made (a wrong result reported as success is the
//! one failure an agent cannot recover from). An element that is none of
//! these fails `not_a_select`.

use std::time::Duration;

use axon_core::ToolError;
use chromiumoxide::page::Page;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::poll;
use crate::input;
use crate::locate::{self, Found, Want};

/// How long the widget may take to show the value once its option was
/// clicked (a framework's round trip to its server and back).
const CONFIRM: Duration = Duration::from_secs(2);

/// How long an editable combobox is given to list the option before the
/// value is typed into it.
const TYPE_AFTER: Duration = Duration::from_millis(300);

/// Select `value` (or the option at `index`) in the custom widget `found`.
pub(crate) async fn select(
    page: &Page,
    found: &Found,
    values: &[String],
    index: Option<usize>,
    timeout: Duration,
) -> Result<Value, ToolError> {
    let deadline = Instant::now() + timeout;
    let widget = locate::helper(page, found, "widget", &[]).await?;
    let kind = widget["kind"].as_str().unwrap_or("none");
    if kind == "none" {
        return Err(ToolError::failed(format!(
            "{} is not a <select>, a combobox or a listbox",
            found.element()
        ))
        .with_code("not_a_select"));
    }
    let value = match (values, index) {
        ([one], None) => one.clone(),
        ([], Some(_)) => String::new(),
        _ => {
            return Err(ToolError::invalid_arguments(format!(
                "/values: {} is a {kind}: give one option at a time",
                found.element()
            )));
        }
    };
    if kind == "combobox" && widget["expanded"] != json!(true) {
        open(page, found).await?;
    }
    let args = [json!(value), json!(index)];
    let try_pick = |limit: Duration| {
        poll(Some(page), limit, Duration::from_millis(100), || async {
            let out = locate::helper(page, found, "pickOption", &args).await?;
            let ready = out["found"] == json!(1)
                && out["clear"] != json!(false)
                && (out["same"] == json!(true) || out["datalist"] == json!(true));
            Ok(ready.then_some(out))
        })
    };
    let left = || deadline.saturating_duration_since(Instant::now());
    // An autocomplete lists its options as its field is typed into: it is
    // given a moment to list them unasked, then typed into.
    let types = widget["editable"] == json!(true) && index.is_none();
    let first = if types {
        left().min(TYPE_AFTER)
    } else {
        left()
    };
    let mut picked = try_pick(first).await?;
    let typed = picked.is_none() && types;
    if typed {
        locate::helper(page, found, "clearField", &[]).await?;
        focus(page, found).await?;
        input::insert_text(page, &value).await?;
        picked = try_pick(left()).await?;
    }
    let Some(option) = picked else {
        return Err(missing(page, found, &value, index, kind).await);
    };
    let label = option["label"].as_str().unwrap_or_default().to_string();
    if option["datalist"] == json!(true) {
        let v = option["value"].as_str().unwrap_or(&label).to_string();
        locate::helper(page, found, "clearField", &[]).await?;
        focus(page, found).await?;
        input::insert_text(page, &v).await?;
    } else {
        let (x, y) = (option["x"].as_f64(), option["y"].as_f64());
        let (Some(x), Some(y)) = (x, y) else {
            return Err(ToolError::internal("pickOption gave no point"));
        };
        input::click_at(page, x, y).await?;
    }
    confirm(page, found, &label).await?;
    Ok(json!({
        "element": found.element(), "widget": kind, "selected": [label], "labels": [label],
        "typed": typed,
    }))
}

/// Open the widget with a real click on it.
async fn open(page: &Page, found: &Found) -> Result<(), ToolError> {
    let point = locate::check(page, &found.object, Want::Click)
        .await
        .map_err(|reason| {
            ToolError::failed(format!(
                "{}: {} (opening it)",
                found.element(),
                reason.trim_start_matches('!')
            ))
            .with_code("element_not_interactable")
        })?;
    let (x, y) = (
        point["x"].as_f64().unwrap_or(0.0),
        point["y"].as_f64().unwrap_or(0.0),
    );
    input::click_at(page, x, y).await
}

/// Give the widget's field the focus (typing goes where the focus is).
/// Focus the widget where its keys are heard: its own `<input>`, itself when
/// it takes the focus, else the first part of it that does (Quasar's slider
/// takes keys on its track, not on its `role=slider` root).
async fn focus(page: &Page, found: &Found) -> Result<(), ToolError> {
    crate::cdp::call_on(
        page,
        &found.object,
        "function() { const f = this.tagName === 'INPUT' ? this : this.querySelector('input') \
           || (this.tabIndex >= 0 ? this : this.querySelector('[tabindex]:not([tabindex=\"-1\"])')); \
           (f || this).focus(); }",
        &[],
    )
    .await
    .map(drop)
}

/// Wait (at most [`CONFIRM`]) until the widget shows `label`; a value it
/// never shows is not reported as selected.
async fn confirm(page: &Page, found: &Found, label: &str) -> Result<(), ToolError> {
    let shown = poll(Some(page), CONFIRM, Duration::from_millis(50), || async {
        let out = locate::helper(page, found, "shows", &[json!(label)]).await?;
        Ok((out == json!(true)).then_some(()))
    })
    .await?;
    shown.ok_or_else(|| {
        ToolError::failed(format!(
            "{} does not show {label:?} after it was picked (waited {} ms): the page did not take the value",
            found.element(),
            CONFIRM.as_millis()
        ))
        .with_code("value_not_shown")
    })
}

/// The error for an option not found (none, or several, named so): what the
/// widget offers instead.
async fn missing(
    page: &Page,
    found: &Found,
    value: &str,
    index: Option<usize>,
    kind: &str,
) -> ToolError {
    let args = [json!(value), json!(index)];
    let out = locate::helper(page, found, "pickOption", &args)
        .await
        .unwrap_or_default();
    let asked = match index {
        Some(i) => format!("index {i}"),
        None => format!("{value:?}"),
    };
    let options = out["options"].clone();
    if out["found"] == json!(1) {
        return ToolError::failed(format!(
            "{} ({kind}): the option {asked} stayed covered, or was drawn anew at every look",
            found.element()
        ))
        .with_code("element_not_interactable");
    }
    if out["found"].as_u64().unwrap_or(0) > 1 {
        return ToolError::failed(format!(
            "{} ({kind}) has {} options named {asked}: give the option's ref instead (options: {options})",
            found.element(),
            out["found"]
        ))
        .with_code("ambiguous_step");
    }
    ToolError::failed(format!(
        "{} ({kind}) shows no option {asked} (options: {options})",
        found.element()
    ))
    .with_code("element_not_found")
}

/// The most key presses a slider is moved by.
const MAX_STEPS: usize = 1000;

/// How long one key press may take to show on a slider before it counts as
/// stuck (a value that goes to the server and back: NiceGUI's sliders).
const STEP_SHOWN: Duration = Duration::from_millis(750);

/// Set an ARIA slider (`role=slider`, `aria-valuenow`) to `text`, a number:
/// with the keys a person would use (Home, End, the arrows), one press at a
/// time, reading `aria-valuenow` after each, until it shows the value. A
/// value the slider cannot take (past its range, between its steps) or does
/// not show fails `value_not_shown`; it is never reported set.
pub(crate) async fn set_slider(page: &Page, found: &Found, text: &str) -> Result<Value, ToolError> {
    let Ok(target) = text.trim().parse::<f64>() else {
        return Err(ToolError::invalid_arguments(format!(
            "/text: {} is a slider: give a number, not {text:?}",
            found.element()
        )));
    };
    let read = || async {
        let w = locate::helper(page, found, "widget", &[]).await?;
        Ok::<_, ToolError>((w["now"].as_f64(), w["min"].as_f64(), w["max"].as_f64()))
    };
    let (now, min, max) = read().await?;
    let Some(mut now) = now else {
        return Err(ToolError::failed(format!(
            "{} shows no aria-valuenow: its value cannot be read back",
            found.element()
        ))
        .with_code("value_not_shown"));
    };
    if min.is_some_and(|m| target < m) || max.is_some_and(|m| target > m) {
        return Err(ToolError::invalid_arguments(format!(
            "/text: {target} is outside {}'s range {}..={}",
            found.element(),
            min.map_or("?".into(), |m| m.to_string()),
            max.map_or("?".into(), |m| m.to_string())
        )));
    }
    focus(page, found).await?;
    let jump = match (min, max) {
        (Some(m), _) if target == m => Some("Home"),
        (_, Some(m)) if target == m => Some("End"),
        _ => None,
    };
    if let Some(key) = jump {
        input::press(page, &input::parse_chord(key)?).await?;
        now = read().await?.0.unwrap_or(now);
    }
    let mut steps = 0;
    while now != target && steps < MAX_STEPS {
        let key = if now < target {
            "ArrowRight"
        } else {
            "ArrowLeft"
        };
        input::press(page, &input::parse_chord(key)?).await?;
        // A slider whose value makes a round trip (an app that draws it from
        // its server's state, over a websocket) shows the step a moment later.
        let moved = poll(
            Some(page),
            STEP_SHOWN,
            Duration::from_millis(20),
            || async {
                let next = read().await?.0;
                Ok(next.filter(|n| *n != now))
            },
        )
        .await?;
        let next = moved.unwrap_or(now);
        // Stuck, or stepped past the value: the slider cannot show it.
        if next == now || (now < target) != (next < target) && next != target {
            now = next;
            break;
        }
        now = next;
        steps += 1;
    }
    if now != target {
        return Err(ToolError::failed(format!(
            "{} shows {now}, not {target}: the slider does not take that value",
            found.element()
        ))
        .with_code("value_not_shown"));
    }
    Ok(json!({"element": found.element(), "widget": "slider", "value": now}))
}
