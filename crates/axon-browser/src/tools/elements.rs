//! Acting on one element: `browser_click`, `browser_type`, `browser_clear_input`,
//! `browser_press_key` and `browser_wait_for_element`. Each finds its element
//! through [`crate::locate`], auto-waiting until it can act (visible, enabled,
//! stable, not covered), and acts with real input events.

use std::sync::Arc;
use std::time::Duration;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Acted, ElementArgs, acting, element, idempotent, poll, read_only};
use crate::cdp::{self, Evaluated};
use crate::input;
use crate::locate::{self, Address, HELPERS, Target, Want};
use crate::session::Browsers;

/// `browser_click` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClickArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// With role+name: if none appears, the first of that role, else the
    /// name as text.
    #[serde(default)]
    pub fallback: bool,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_click`: click the element addressed, once it is there and takes clicks.
pub async fn click(b: &Browsers, args: ClickArgs, ctx: &ToolContext) -> Result<Acted, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.click_ms).await?;
    let target = args.address.target()?;
    let (found, matched_by) = match locate::wait_for(&page, &target, Want::Click, timeout).await {
        Ok(found) => (found, None),
        Err(e) if args.fallback && e.code.as_deref() == Some("element_not_found") => {
            let Target::Role {
                role,
                name: Some(name),
                exact,
            } = &target
            else {
                return Err(e);
            };
            // The page has had the whole timeout to settle: look once each.
            let by_role = Target::Role {
                role: role.clone(),
                name: None,
                exact: *exact,
            };
            let by_text = Target::Text {
                text: name.clone(),
                exact: *exact,
            };
            match locate::wait_for(&page, &by_role, Want::Click, Duration::ZERO).await {
                Ok(found) => (found, Some("role".to_string())),
                Err(_) => {
                    match locate::wait_for(&page, &by_text, Want::Click, Duration::ZERO).await {
                        Ok(found) => (found, Some("text".to_string())),
                        Err(_) => return Err(e),
                    }
                }
            }
        }
        Err(e) => return Err(e),
    };
    let (x, y) = (
        found.info["x"].as_f64().unwrap_or(0.0),
        found.info["y"].as_f64().unwrap_or(0.0),
    );
    input::click_at(&page, x, y).await?;
    Ok(Acted {
        element: found.element(),
        matched_by,
    })
}

/// `browser_type` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TypeArgs {
    /// The text to type.
    pub text: String,
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Empty the field first.
    #[serde(default)]
    pub clear: bool,
    /// Press Enter after typing (submits a search box or a form).
    #[serde(default)]
    pub submit: bool,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// What `browser_type` did; the text itself is not echoed back.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Typed {
    /// The element typed into.
    pub element: String,
    /// How many characters were typed.
    pub chars: usize,
    /// Whether it was a password field (its text is `***` in history).
    pub password: bool,
    /// A slider's value as it shows it after (`aria-valuenow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
}

/// `browser_type`: type into the element addressed (or where the focus is).
pub async fn type_text(
    b: &Browsers,
    args: TypeArgs,
    ctx: &ToolContext,
) -> Result<Typed, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.type_ms).await?;
    let (element, password, found) = if args.address.is_empty() {
        let js = format!(
            "(() => {{ const e = document.activeElement; if (!e || e === document.body) return null; \
             return {{element: {h}.describe(e), password: e.type === 'password'}}; }})()",
            h = *HELPERS
        );
        match cdp::evaluate(&page, &js, true).await? {
            Evaluated::Value(v) if v.is_object() => (
                v["element"].as_str().unwrap_or_default().to_string(),
                v["password"] == json!(true),
                None,
            ),
            _ => {
                return Err(ToolError::failed(
                    "nothing has focus: give an element (selector, ref, role, label, has_text)",
                )
                .with_code("element_not_found"));
            }
        }
    } else {
        let found = match element(&page, &args.address, Want::Type, timeout).await {
            Ok(found) => found,
            // A slider takes a number by its keys (widgets.rs).
            Err(e) if e.code.as_deref() == Some("not_editable") => {
                let found = element(&page, &args.address, Want::Enabled, timeout).await?;
                let widget = locate::helper(&page, &found, "widget", &[]).await?;
                if widget["kind"] != json!("slider") {
                    return Err(e);
                }
                let set = super::widgets::set_slider(&page, &found, &args.text).await?;
                return Ok(Typed {
                    element: found.element(),
                    chars: args.text.chars().count(),
                    password: false,
                    value: set["value"].as_f64(),
                });
            }
            Err(e) => return Err(e),
        };
        (
            found.element(),
            found.info["password"] == json!(true),
            Some(found),
        )
    };
    if password {
        ctx.mark_secret("/text");
    }
    if let Some(found) = found
        .as_ref()
        .filter(|f| f.info["set_value"] == json!(true))
    {
        let set = locate::helper(&page, found, "setValue", &[json!(args.text)]).await?;
        if let Some(error) = set["error"].as_str() {
            return Err(ToolError::invalid_arguments(format!("/text: {error}")));
        }
        if args.submit {
            input::press(&page, &input::parse_chord("Enter")?).await?;
        }
        return Ok(Typed {
            element,
            chars: args.text.chars().count(),
            password,
            value: None,
        });
    }
    if args.clear {
        match &found {
            Some(found) => {
                locate::helper(&page, found, "clearField", &[]).await?;
            }
            None => {
                let js = format!("{}.clearField(document.activeElement)", *HELPERS);
                cdp::evaluate(&page, &js, true).await?;
            }
        }
    }
    input::insert_text(&page, &args.text).await?;
    if args.submit {
        input::press(&page, &input::parse_chord("Enter")?).await?;
    }
    Ok(Typed {
        element,
        chars: args.text.chars().count(),
        password,
        value: None,
    })
}

pub(crate) async fn clear_input(
    b: &Browsers,
    args: ElementArgs,
    ctx: &ToolContext,
) -> Result<Acted, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.type_ms).await?;
    let found = element(&page, &args.address, Want::Type, timeout).await?;
    locate::helper(&page, &found, "clearField", &[]).await?;
    Ok(Acted {
        element: found.element(),
        matched_by: None,
    })
}

/// `browser_press_key` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PressKeyArgs {
    /// A key (`Enter`, `Tab`, `Escape`, `ArrowDown`, `a`) with optional
    /// modifiers (`Control+a`, `Shift+Tab`).
    pub key: String,
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_press_key`: press a key chord (on the element addressed, if any).
pub async fn press_key(
    b: &Browsers,
    args: PressKeyArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let chord = input::parse_chord(&args.key)?;
    let page = b.page_for(ctx).await?;
    let mut focused = None;
    if !args.address.is_empty() {
        let timeout = b
            .config()
            .timeout(args.timeout_ms, b.config().timeouts.press_key_ms);
        let found = element(&page, &args.address, Want::Enabled, timeout).await?;
        cdp::call_on(&page, &found.object, "function() { this.focus(); }", &[]).await?;
        focused = Some(found.element());
    }
    input::press(&page, &chord).await?;
    Ok(json!({"key": args.key, "element": focused}))
}

/// What `browser_wait_for_element` waits for.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum ElementState {
    /// In the document.
    Attached,
    /// In the document and visible.
    #[default]
    Visible,
    /// Not visible (or not there).
    Hidden,
    /// Not in the document.
    Detached,
}

/// `browser_wait_for_element` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WaitForElementArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// The state to wait for.
    #[serde(default)]
    pub state: ElementState,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

pub(crate) async fn wait_for_element(
    b: &Browsers,
    args: WaitForElementArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.element_ms).await?;
    let target = args.address.target()?;
    let start = Instant::now();
    match args.state {
        ElementState::Attached | ElementState::Visible => {
            let want = if args.state == ElementState::Attached {
                Want::Attached
            } else {
                Want::Visible
            };
            let found = locate::wait_for(&page, &target, want, timeout).await?;
            Ok(json!({"element": found.element(), "waited_ms": start.elapsed().as_millis() as u64}))
        }
        ElementState::Hidden | ElementState::Detached => {
            let (page, target, hidden) = (&page, &target, args.state == ElementState::Hidden);
            let gone = poll(
                Some(page),
                timeout,
                Duration::from_millis(50),
                || async move {
                    Ok(match locate::locate(page, target).await? {
                        None => Some(()),
                        Some(object) => (hidden
                            && locate::check(page, &object, Want::Visible).await.is_err())
                        .then_some(()),
                    })
                },
            )
            .await?;
            if gone.is_some() {
                return Ok(json!({"waited_ms": start.elapsed().as_millis() as u64}));
            }
            let state = if args.state == ElementState::Hidden {
                "visible"
            } else {
                "attached"
            };
            Err(ToolError::failed(format!(
                "{target} is still {state} after {} ms",
                timeout.as_millis()
            ))
            .with_code("element_still_present"))
        }
    }
}

/// Register this file's tools, all sharing `browsers`.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_click",
        acting(),
        "Clicks an element once it is visible, enabled, stable and not covered. Address it by one of selector, ref, role(+name), label, has_text.",
        click
    );
    browser_tool!(
        registry,
        browsers,
        "browser_type",
        idempotent(),
        "Types `text` into an element (or the focused one); `clear` empties it first, `submit` presses Enter after.",
        type_text
    );
    browser_tool!(
        registry,
        browsers,
        "browser_clear_input",
        idempotent(),
        "Empties a text field.",
        clear_input
    );
    browser_tool!(
        registry,
        browsers,
        "browser_press_key",
        acting(),
        "Presses a key (Enter, Tab, Escape, ArrowDown, a, Control+a) on the focused element, or on an element it focuses first.",
        press_key
    );
    browser_tool!(
        registry,
        browsers,
        "browser_wait_for_element",
        read_only(),
        "Waits until an element is attached, visible (default), hidden or detached.",
        wait_for_element
    );
    Ok(())
}
