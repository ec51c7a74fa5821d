//! Finding the element a tool acts on, and waiting until it can be acted on.
//!
//! An element is addressed by exactly one of: a CSS `selector`, a `ref` from
//! `browser_snapshot`, an ARIA `role` (with an optional accessible `name`,
//! matched as Playwright's getByRole), a form field's `label`, or visible text
//! `has_text`. Roles and names come from Chromium's own accessibility tree
//! (`Accessibility.queryAXTree`); the other addresses are resolved by the
//! helpers in `axon.js`, in one round trip.
//!
//! Auto-wait: the element must be attached, then (depending on the action)
//! visible, enabled, not animating, and for a click the topmost element at its
//! centre. "Stable" is judged from the page's running animations rather than by
//! comparing boxes over two animation frames: that would cost two frames
//! (≥ 33 ms) on every action, against a budget of 1.1× a bare CDP command.

use std::sync::LazyLock;
use std::time::Duration;

use axon_core::{ErrorKind, ToolError};
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cdp::{self, Evaluated};
pub(crate) use crate::helpers::HELPERS;

/// Which element: exactly one of `selector`, `ref`, `role`, `label`,
/// `has_text`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
pub struct Address {
    // These comments are what a model reads in every element tool's schema:
    // kept short on purpose. The first visible match of a selector wins; a
    // label is a `<label>`, `aria-labelledby`, `aria-label`, else placeholder.
    // (No description: the name says it all, in every element tool.)
    #[allow(missing_docs)]
    pub selector: Option<String>,
    /// Snapshot ref (e42).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// ARIA role (button, link, …).
    pub role: Option<String>,
    /// With role: accessible name (substring).
    pub name: Option<String>,
    /// Whole-text match for name, label, has_text.
    #[serde(default)]
    pub exact: bool,
    /// A field's label text.
    pub label: Option<String>,
    /// Visible text.
    pub has_text: Option<String>,
}

/// What an [`Address`] asks for, once checked.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Target {
    Selector(String),
    Ref(i64),
    Role {
        role: String,
        name: Option<String>,
        exact: bool,
    },
    Label {
        label: String,
        exact: bool,
    },
    Text {
        text: String,
        exact: bool,
    },
}

impl Address {
    /// Whether no address field is set (tools where the element is optional).
    pub fn is_empty(&self) -> bool {
        self.selector.is_none()
            && self.reference.is_none()
            && self.role.is_none()
            && self.label.is_none()
            && self.has_text.is_none()
    }

    /// The one target this address names; `invalid_arguments` naming the
    /// fields when there are none or several.
    pub(crate) fn target(&self) -> Result<Target, ToolError> {
        let given: Vec<&str> = [
            ("selector", self.selector.is_some()),
            ("ref", self.reference.is_some()),
            ("role", self.role.is_some()),
            ("label", self.label.is_some()),
            ("has_text", self.has_text.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect();
        if given.len() != 1 {
            return Err(ToolError::invalid_arguments(format!(
                "give exactly one of selector, ref, role, label, has_text (got {})",
                if given.is_empty() {
                    "none".to_string()
                } else {
                    given.join(", ")
                }
            )));
        }
        if self.name.is_some() && self.role.is_none() {
            return Err(ToolError::invalid_arguments(
                "/name: goes with role (use has_text or label to match text alone)",
            ));
        }
        let exact = self.exact;
        Ok(if let Some(s) = &self.selector {
            if s.trim().is_empty() {
                return Err(ToolError::invalid_arguments("/selector: is empty"));
            }
            Target::Selector(s.clone())
        } else if let Some(r) = &self.reference {
            Target::Ref(parse_ref(r)?)
        } else if let Some(role) = &self.role {
            Target::Role {
                role: role.trim().to_lowercase(),
                name: self.name.clone(),
                exact,
            }
        } else if let Some(label) = &self.label {
            Target::Label {
                label: label.clone(),
                exact,
            }
        } else {
            Target::Text {
                text: self.has_text.clone().unwrap_or_default(),
                exact,
            }
        })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Selector(s) => write!(f, "selector {s:?}"),
            Target::Ref(id) => write!(f, "ref e{id}"),
            Target::Role {
                role,
                name: Some(name),
                ..
            } => write!(f, "role {role} named {name:?}"),
            Target::Role {
                role, name: None, ..
            } => write!(f, "role {role}"),
            Target::Label { label, .. } => write!(f, "label {label:?}"),
            Target::Text { text, .. } => write!(f, "text {text:?}"),
        }
    }
}

/// `e42` → 42 (a Chromium backend node id).
fn parse_ref(text: &str) -> Result<i64, ToolError> {
    text.strip_prefix('e')
        .and_then(|n| n.parse::<i64>().ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            ToolError::invalid_arguments(format!(
                "/ref: {text:?} is not a ref from browser_snapshot (like \"e42\")"
            ))
        })
}

/// Whether a name matches the way Playwright's getByRole does.
pub fn name_matches(actual: &str, wanted: &str, exact: bool) -> bool {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    if exact {
        norm(actual) == norm(wanted)
    } else {
        norm(actual)
            .to_lowercase()
            .contains(&norm(wanted).to_lowercase())
    }
}

/// What must hold before acting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// In the document (reading text, tables, HTML).
    Attached,
    /// Attached with a non-empty box, not `visibility: hidden`.
    Visible,
    /// Visible, enabled and not animating.
    Enabled,
    /// Enabled and editable; focused by the check.
    Type,
    /// Enabled, scrolled into view, and the topmost element at its centre.
    Click,
    /// As [`Want::Click`], enabled or not: where the pointer goes to hover
    /// or drag.
    Point,
}

impl Want {
    fn as_str(self) -> &'static str {
        match self {
            Want::Attached => "attached",
            Want::Visible => "visible",
            Want::Enabled => "enabled",
            Want::Type => "type",
            Want::Click => "click",
            Want::Point => "point",
        }
    }
}

/// An element ready for its action.
#[derive(Debug)]
pub(crate) struct Found {
    /// The element's remote object, for `Runtime.callFunctionOn`.
    pub object: String,
    /// What the check reported: `element` (tag#id.class), `tag`, and for a
    /// click the point `x`, `y`; for typing, whether it is a `password` field.
    pub info: Value,
}

impl Found {
    /// `tag#id.class` of the element.
    pub(crate) fn element(&self) -> String {
        self.info["element"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// The element `target` names now, if any, as a remote object.
pub(crate) async fn locate(page: &Page, target: &Target) -> Result<Option<String>, ToolError> {
    match target {
        Target::Ref(id) => {
            let resolved = cdp::send(page, "DOM.resolveNode", json!({"backendNodeId": id})).await;
            match resolved {
                Ok(v) => Ok(v["object"]["objectId"].as_str().map(str::to_string)),
                Err(e) => Err(ToolError::failed(format!(
                    "ref e{id} is stale (its element left the page; take a new browser_snapshot): {}",
                    e.message
                ))
                .with_code("stale_ref")
                .before_acting()),
            }
        }
        Target::Role { role, name, exact } => {
            locate_role(page, role, name.as_deref(), *exact).await
        }
        _ => {
            let spec = match target {
                Target::Selector(s) => json!({"selector": s}),
                Target::Label { label, exact } => json!({"label": label, "exact": exact}),
                Target::Text { text, exact } => json!({"has_text": text, "exact": exact}),
                _ => Value::Null,
            };
            let expression = format!("{}.find({spec})", *HELPERS);
            match cdp::evaluate(page, &expression, false).await? {
                Evaluated::Object(id) => Ok(Some(id)),
                Evaluated::Value(_) => Ok(None),
                Evaluated::Thrown(text) if text.contains("is not a valid selector") => {
                    Err(ToolError::invalid_arguments(format!("/selector: {text}")))
                }
                // The page's own script threw under the lookup (a page that
                // replaced a DOM method): the page's doing, not a flaky
                // browser. `transient` would be retried and heard by the
                // breaker every caller of the tool shares.
                Evaluated::Thrown(text) => Err(ToolError::failed(format!(
                    "locating {target}: the page threw: {text}"
                ))
                .with_code("locate_failed")
                .before_acting()),
            }
        }
    }
}

/// The roles people write that Chromium's tree names otherwise.
fn chromium_role(role: &str) -> &str {
    match role {
        "img" => "image",
        other => other,
    }
}

/// The first non-ignored node of `role` whose name matches, from Chromium's
/// accessibility tree.
async fn locate_role(
    page: &Page,
    role: &str,
    name: Option<&str>,
    exact: bool,
) -> Result<Option<String>, ToolError> {
    let Evaluated::Object(document) = cdp::evaluate(page, "document", false).await? else {
        return Ok(None);
    };
    let mut params = json!({"objectId": document, "role": chromium_role(role)});
    if let (Some(name), true) = (name, exact) {
        params["accessibleName"] = json!(name);
    }
    let found = cdp::send(page, "Accessibility.queryAXTree", params).await?;
    let nodes = found["nodes"].as_array().cloned().unwrap_or_default();
    let hit = nodes.iter().find(|node| {
        node["ignored"] != json!(true)
            && node["backendDOMNodeId"].is_i64()
            && name.is_none_or(|want| {
                name_matches(
                    node["name"]["value"].as_str().unwrap_or_default(),
                    want,
                    exact,
                )
            })
    });
    let Some(id) = hit.and_then(|node| node["backendDOMNodeId"].as_i64()) else {
        return Ok(None);
    };
    let resolved = cdp::send(page, "DOM.resolveNode", json!({"backendNodeId": id})).await?;
    Ok(resolved["object"]["objectId"].as_str().map(str::to_string))
}

/// The function every auto-wait poll runs on its element (built once).
static CHECK: LazyLock<String> = LazyLock::new(|| {
    format!(
        "function(want) {{ return {}.check(this, want); }}",
        *HELPERS
    )
});

/// Run the page-side check `want` on `object`: `Ok(info)` when it passed,
/// `Err(reason)` when not (yet), where a reason starting with `!` is final.
pub(crate) async fn check(page: &Page, object: &str, want: Want) -> Result<Value, String> {
    match cdp::call_on(page, object, &CHECK, &[json!(want.as_str())]).await {
        Ok(Evaluated::Value(info)) if info["ok"] == json!(true) => Ok(info),
        Ok(Evaluated::Value(info)) => {
            let reason = info["reason"].as_str().unwrap_or("not ready").to_string();
            Err(if info["fatal"] == json!(true) {
                format!("!{reason}")
            } else {
                reason
            })
        }
        Ok(Evaluated::Thrown(text)) => Err(format!("check failed: {text}")),
        Ok(Evaluated::Object(_)) => Err("check returned an object".into()),
        // The object went away: the page navigated or the node was collected.
        Err(_) => Err("detached".into()),
    }
}

/// The longest gaps between attempts, as Playwright's poll delays (then
/// 100 ms each); an attempt comes sooner when the page changes
/// ([`next_change`]).
const BACKOFF_MS: [u64; 5] = [0, 20, 50, 100, 100];

/// Resolves when the document changes (a node added or removed, an
/// attribute or a text changed: what makes an element appear, show or
/// enable) or after `ms`, whichever is first.
const NEXT_CHANGE_JS: &str = "(ms) => new Promise((done) => { \
    const o = new MutationObserver(() => { o.disconnect(); done(true); }); \
    o.observe(document, {subtree: true, childList: true, attributes: true, characterData: true}); \
    setTimeout(() => { o.disconnect(); done(false); }, ms); })";

/// Wait until the page's document changes or `limit` passes, whichever is
/// first, so that a wait looks again as soon as the page could be ready
/// rather than at its next poll. A change no mutation shows (a CSS
/// transition, a scroll) is seen at `limit`; a page that navigates away ends
/// the wait at once (its promise dies with its document).
pub(crate) async fn next_change(page: &Page, limit: Duration) {
    if limit.is_zero() {
        return;
    }
    let expression = format!("({NEXT_CHANGE_JS})({})", limit.as_millis());
    // The page's own timer ends it; ours is there if the page is stuck.
    let asked = cdp::evaluate(page, &expression, true);
    let _ = tokio::time::timeout(limit + Duration::from_millis(100), asked).await;
}

/// Wait up to `timeout` for `target` to exist and pass `want`.
///
/// Fails `failed`/`element_not_found` when nothing matched by the deadline,
/// `failed`/`element_not_interactable` (`disabled`, `not_editable`, or
/// `element_detached`) when an element matched but never became ready. The wait was the retry: the
/// pipeline does not repeat it, and no breaker counts it, because an element
/// that never became ready says nothing about the browser's health
/// (docs/design.md, "Error kinds").
pub(crate) async fn wait_for(
    page: &Page,
    target: &Target,
    want: Want,
    timeout: Duration,
) -> Result<Found, ToolError> {
    let start = Instant::now();
    let deadline = start + timeout;
    let mut last_reason: Option<String> = None;
    // The element that matched but was not ready: a recorded frame boxes it.
    let mut unready = None;
    let mut attempt = 0usize;
    loop {
        match locate(page, target).await {
            Ok(Some(object)) => match check(page, &object, want).await {
                Ok(info) if info["framed"] == json!(true) => {
                    let info = in_page_coordinates(page, &object, info).await;
                    return Ok(noted(page, Found { object, info }).await);
                }
                Ok(info) => return Ok(noted(page, Found { object, info }).await),
                Err(reason) if reason.starts_with('!') => {
                    note_box(page, &object).await;
                    let reason = &reason[1..];
                    return Err(ToolError::failed(format!("{target}: {reason}"))
                        .with_code(state_code(reason)));
                }
                Err(reason) => {
                    last_reason = Some(reason);
                    unready = Some(object);
                }
            },
            Ok(None) => {}
            // The page is between documents, or its script threw under the
            // lookup (it may be half loaded): look again until the deadline.
            Err(e)
                if (e.kind == ErrorKind::Transient && e.code.is_none())
                    || e.code.as_deref() == Some("locate_failed") =>
            {
                last_reason.get_or_insert_with(|| e.message.clone());
            }
            Err(e) => return Err(e),
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let delay = Duration::from_millis(BACKOFF_MS.get(attempt).copied().unwrap_or(100));
        attempt += 1;
        next_change(page, delay.min(deadline - now)).await;
    }
    let waited = start.elapsed().as_millis();
    if let Some(object) = &unready {
        note_box(page, object).await;
    }
    Err(match last_reason {
        None => ToolError::failed(format!("no element matches {target} (waited {waited} ms)"))
            .with_code("element_not_found"),
        Some(reason) if reason == "detached" => ToolError::failed(format!(
            "{target}: the element was detached from the page (waited {waited} ms)"
        ))
        .with_code("element_detached")
        .before_acting(),
        Some(reason) => ToolError::failed(format!("{target}: {reason} (waited {waited} ms)"))
            .with_code(state_code(&reason))
            .before_acting(),
    })
}

/// `found`, its box noted when the action is recorded (recording.rs: the
/// frame draws it); nothing is asked of the page otherwise.
async fn noted(page: &Page, found: Found) -> Found {
    note_box(page, &found.object).await;
    found
}

/// Note `object`'s box when the action is recorded.
async fn note_box(page: &Page, object: &str) {
    if !crate::recording::wants_target() {
        return;
    }
    const RECT: &str = "function() { const r = this.getBoundingClientRect(); \
        return {x: r.left, y: r.top, width: r.width, height: r.height}; }";
    if let Ok(crate::cdp::Evaluated::Value(r)) = cdp::call_on(page, object, RECT, &[]).await {
        let at = |k: &str| r[k].as_f64().unwrap_or(0.0);
        crate::recording::note_target(crate::recording::Rect {
            x: at("x"),
            y: at("y"),
            width: at("width"),
            height: at("height"),
        });
    }
}

/// The code of an element that never became ready, by the check's reason:
/// `disabled`, `not_editable` (a field that cannot be typed into), else
/// `element_not_interactable` (not visible, covered, animating).
fn state_code(reason: &str) -> &'static str {
    match reason {
        "disabled" => "disabled",
        "not editable" => "not_editable",
        _ => "element_not_interactable",
    }
}

/// An element in an iframe is checked in its frame, so its click point is
/// the frame's: take the page's from the browser (`DOM.getContentQuads`
/// maps through every frame). Left as it was if the browser cannot say.
async fn in_page_coordinates(page: &Page, object: &str, mut info: Value) -> Value {
    let quads = cdp::send(page, "DOM.getContentQuads", json!({"objectId": object})).await;
    let quad: Vec<f64> = quads
        .ok()
        .and_then(|q| q["quads"].get(0).and_then(Value::as_array).cloned())
        .map(|q| q.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    if quad.len() == 8 {
        info["x"] = json!((quad[0] + quad[2] + quad[4] + quad[6]) / 4.0);
        info["y"] = json!((quad[1] + quad[3] + quad[5] + quad[7]) / 4.0);
    }
    info
}

/// Call helper `method` of `axon.js` on `found`'s element with `args`; the
/// result by value. A failure here means the element went away between the
/// check and the action: `failed` (an element state, as in [`wait_for`]).
pub(crate) async fn helper(
    page: &Page,
    found: &Found,
    method: &str,
    args: &[Value],
) -> Result<Value, ToolError> {
    let params: Vec<String> = (0..args.len()).map(|i| format!("a{i}")).collect();
    let list = params.join(", ");
    let sep = if list.is_empty() { "" } else { ", " };
    let function = format!(
        "function({list}) {{ return {}.{method}(this{sep}{list}); }}",
        *HELPERS
    );
    match cdp::call_on(page, &found.object, &function, args).await {
        Ok(Evaluated::Value(v)) => Ok(v),
        Ok(Evaluated::Thrown(text)) => Err(ToolError::failed(format!("{method}: {text}"))),
        Ok(Evaluated::Object(_)) => {
            Err(ToolError::internal(format!("{method} returned an object")))
        }
        Err(e) => Err(ToolError::failed(format!(
            "{} was detached before {method}: {}",
            found.element(),
            e.message
        ))
        .with_code("element_detached")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_address() {
        let none = Address::default().target().unwrap_err();
        assert!(none.message.contains("got none"), "{}", none.message);
        let two = Address {
            selector: Some("#a".into()),
            label: Some("Name".into()),
            ..Address::default()
        };
        assert!(
            two.target()
                .unwrap_err()
                .message
                .contains("selector, label")
        );
        let name_alone = Address {
            has_text: Some("x".into()),
            name: Some("y".into()),
            ..Address::default()
        };
        assert!(
            name_alone
                .target()
                .unwrap_err()
                .message
                .starts_with("/name")
        );
        let role = Address {
            role: Some(" Button ".into()),
            name: Some("Log in".into()),
            ..Address::default()
        };
        assert_eq!(
            role.target().unwrap(),
            Target::Role {
                role: "button".into(),
                name: Some("Log in".into()),
                exact: false
            }
        );
    }

    #[test]
    fn refs_are_e_and_a_positive_number() {
        assert_eq!(parse_ref("e42").unwrap(), 42);
        for bad in ["42", "e", "e-1", "e0", "ex"] {
            assert!(parse_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_match_like_get_by_role() {
        assert!(name_matches("Log  in", "log in", false));
        assert!(name_matches("Log in now", "log in", false));
        assert!(!name_matches("Log in now", "Log in", true));
        assert!(name_matches(" Log in ", "Log in", true));
        assert!(!name_matches("log in", "Log in", true));
    }
}
