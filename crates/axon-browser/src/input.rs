//! Mouse and keyboard input through `Input.dispatch*` (what a user's device
//! would send), and waiting for the navigation an action started.

use std::time::Duration;

use axon_core::ToolError;
use chromiumoxide::page::Page;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cdp::{self, Evaluated};

/// Press and release the left button at (`x`, `y`) in viewport pixels.
pub(crate) async fn click_at(page: &Page, x: f64, y: f64) -> Result<(), ToolError> {
    cdp::send(
        page,
        "Input.dispatchMouseEvent",
        json!({"type": "mouseMoved", "x": x, "y": y}),
    )
    .await?;
    for kind in ["mousePressed", "mouseReleased"] {
        let event = json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1});
        cdp::send(page, "Input.dispatchMouseEvent", event).await?;
    }
    Ok(())
}

/// Insert `text` at the caret of the focused element, as typing would (one
/// `input` event; no per-key events).
pub(crate) async fn insert_text(page: &Page, text: &str) -> Result<(), ToolError> {
    if text.is_empty() {
        return Ok(());
    }
    cdp::send(page, "Input.insertText", json!({"text": text}))
        .await
        .map(|_| ())
}

/// A key and its modifiers, from `Enter`, `Control+a`, `Shift+Tab`.
#[derive(Debug)]
pub(crate) struct Chord {
    key: &'static chromiumoxide::keys::KeyDefinition,
    /// CDP's modifier bits: Alt 1, Control 2, Meta 4, Shift 8.
    modifiers: i64,
    held: Vec<&'static chromiumoxide::keys::KeyDefinition>,
}

/// Parse a key chord; `invalid_arguments` naming `/key` when a part is unknown.
pub(crate) fn parse_chord(text: &str) -> Result<Chord, ToolError> {
    let unknown = |part: &str| {
        ToolError::invalid_arguments(format!(
            "/key: unknown key {part:?} (use names like Enter, Tab, Escape, ArrowDown, a, Control+a)"
        ))
    };
    // "+" alone, or "Control++", names the plus key.
    let (mods, key) = match text.strip_suffix("++") {
        Some(rest) => (rest, "+"),
        None if text == "+" => ("", "+"),
        None => match text.rsplit_once('+') {
            Some((mods, key)) => (mods, key),
            None => ("", text),
        },
    };
    let mut modifiers = 0;
    let mut held = Vec::new();
    for part in mods.split('+').filter(|p| !p.is_empty()) {
        let (bit, name) = match part.to_ascii_lowercase().as_str() {
            "alt" | "option" => (1, "Alt"),
            "control" | "ctrl" => (2, "Control"),
            "meta" | "command" | "cmd" => (4, "Meta"),
            "shift" => (8, "Shift"),
            _ => return Err(unknown(part)),
        };
        modifiers |= bit;
        held.push(chromiumoxide::keys::get_key_definition(name).ok_or_else(|| unknown(part))?);
    }
    let key = chromiumoxide::keys::get_key_definition(key).ok_or_else(|| unknown(key))?;
    Ok(Chord {
        key,
        modifiers,
        held,
    })
}

/// Press `chord`: modifiers down, the key down and up, modifiers up. The key
/// types its text only without Control, Alt or Meta held.
pub(crate) async fn press(page: &Page, chord: &Chord) -> Result<(), ToolError> {
    let mut modifiers = 0;
    for def in &chord.held {
        modifiers |= bit_of(def.key);
        cdp::send(
            page,
            "Input.dispatchKeyEvent",
            key_event("rawKeyDown", def, modifiers, None),
        )
        .await?;
    }
    let k = chord.key;
    let typed = if chord.modifiers & 0b0111 == 0 {
        k.text.or((k.key.chars().count() == 1).then_some(k.key))
    } else {
        None
    };
    let down = if typed.is_some() {
        "keyDown"
    } else {
        "rawKeyDown"
    };
    cdp::send(
        page,
        "Input.dispatchKeyEvent",
        key_event(down, k, chord.modifiers, typed),
    )
    .await?;
    cdp::send(
        page,
        "Input.dispatchKeyEvent",
        key_event("keyUp", k, chord.modifiers, None),
    )
    .await?;
    for def in chord.held.iter().rev() {
        modifiers &= !bit_of(def.key);
        cdp::send(
            page,
            "Input.dispatchKeyEvent",
            key_event("keyUp", def, modifiers, None),
        )
        .await?;
    }
    Ok(())
}

fn bit_of(key: &str) -> i64 {
    match key {
        "Alt" => 1,
        "Control" => 2,
        "Meta" => 4,
        "Shift" => 8,
        _ => 0,
    }
}

fn key_event(
    kind: &str,
    def: &chromiumoxide::keys::KeyDefinition,
    modifiers: i64,
    text: Option<&str>,
) -> Value {
    let mut event = json!({
        "type": kind,
        "key": def.key,
        "code": def.code,
        "windowsVirtualKeyCode": def.key_code,
        "nativeVirtualKeyCode": def.key_code,
        "modifiers": modifiers,
    });
    if let Some(text) = text {
        event["text"] = json!(text);
        event["unmodifiedText"] = json!(text);
    }
    event
}

/// Marks the current document, so [`settle`] can tell a new one apart.
pub(crate) async fn mark_document(page: &Page) -> Result<(String, String), ToolError> {
    let token = ulid::Ulid::new().to_string();
    let js = format!("(() => {{ window.__axon_doc = {token:?}; return location.href; }})()");
    match cdp::evaluate(page, &js, true).await? {
        Evaluated::Value(Value::String(url)) => Ok((token, url)),
        _ => Ok((token, String::new())),
    }
}

/// What [`settle`] saw.
#[derive(Debug)]
pub(crate) struct Settled {
    /// A new document was loaded, or the URL changed in place.
    pub navigated: bool,
    /// The page's URL at the end.
    pub url: String,
    /// The page's title at the end.
    pub title: String,
}

/// After an action that may navigate: wait until a new document (or a new
/// URL) has finished loading, up to `timeout`. When nothing has started
/// within `quiet`, the action did not navigate and this returns at once.
pub(crate) async fn settle(
    page: &Page,
    (token, from): &(String, String),
    quiet: Duration,
    timeout: Duration,
) -> Result<Settled, ToolError> {
    let start = Instant::now();
    let js = format!(
        "({{same: window.__axon_doc === {token:?}, url: location.href, title: document.title, ready: document.readyState}})"
    );
    let mut last = Value::Null;
    loop {
        // Between documents the evaluation fails; that is progress, not an error.
        if let Ok(Evaluated::Value(state)) = cdp::evaluate(page, &js, true).await {
            let moved = state["same"] == json!(false) || state["url"].as_str() != Some(from);
            if moved && state["ready"] == json!("complete") {
                return Ok(settled(&state, true));
            }
            if !moved && start.elapsed() >= quiet {
                return Ok(settled(&state, false));
            }
            last = state;
        }
        if start.elapsed() >= timeout {
            return Err(ToolError::new(
                axon_core::ErrorKind::Timeout,
                format!(
                    "the page did not finish loading within {} ms (at {})",
                    timeout.as_millis(),
                    last["url"].as_str().unwrap_or("?")
                ),
            )
            .with_code("navigation_timeout"));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn settled(state: &Value, navigated: bool) -> Settled {
    Settled {
        navigated,
        url: state["url"].as_str().unwrap_or_default().to_string(),
        title: state["title"].as_str().unwrap_or_default().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_parse_with_modifiers() {
        let enter = parse_chord("Enter").unwrap();
        assert_eq!((enter.key.key, enter.modifiers), ("Enter", 0));
        let select_all = parse_chord("Control+a").unwrap();
        assert_eq!((select_all.key.key, select_all.modifiers), ("a", 2));
        assert_eq!(parse_chord("Ctrl+Shift+Tab").unwrap().modifiers, 10);
        assert_eq!(parse_chord("+").unwrap().key.key, "+");
        assert_eq!(parse_chord("Shift++").unwrap().modifiers, 8);
        let bad = parse_chord("Hyper+x").unwrap_err();
        assert!(bad.message.starts_with("/key") && bad.message.contains("Hyper"));
        assert!(parse_chord("NoSuchKey").is_err());
    }
}
