//! Forms: `browser_select_option` (options of a `<select>` by value, label or
//! index), `browser_submit_form` (and wait for the next page; invalid fields fail
//! with code `invalid_form`) and `browser_search` (find the search box, type the
//! query, press Enter).

use std::sync::Arc;
use std::time::Duration;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{acting, element, idempotent, poll};
use crate::cdp::{self, Evaluated};
use crate::input;
use crate::locate::{self, Address, Found, HELPERS, Want};
use crate::session::Browsers;

/// One value or several.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several (a multi-select).
    Many(Vec<String>),
}

/// `browser_select_option` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SelectArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Option values or labels.
    pub values: Option<OneOrMany>,
    /// Or the option at this position (from 0).
    pub index: Option<usize>,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_select_option`: pick options of a drop-down, native or custom.
pub async fn select_option(
    b: &Browsers,
    args: SelectArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let values = match (&args.values, args.index) {
        (Some(OneOrMany::One(v)), None) => vec![v.clone()],
        (Some(OneOrMany::Many(v)), None) if !v.is_empty() => v.clone(),
        (None, Some(_)) => Vec::new(),
        _ => {
            return Err(ToolError::invalid_arguments(
                "give either values (a string or a non-empty list) or index",
            ));
        }
    };
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.type_ms).await?;
    let started = Instant::now();
    let found = element(&page, &args.address, Want::Enabled, timeout).await?;
    let out = locate::helper(
        &page,
        &found,
        "selectOption",
        &[json!(values), json!(args.index)],
    )
    .await?;
    if out["custom"] == json!(true) {
        let left = timeout.saturating_sub(started.elapsed());
        return super::widgets::select(&page, &found, &values, args.index, left).await;
    }
    if let Some(error) = out["error"].as_str() {
        return Err(ToolError::failed(error.to_string()).with_code("element_not_interactable"));
    }
    if let Some(missing) = out["missing"].as_str() {
        return Err(ToolError::failed(format!(
            "{} has no option {missing} (options: {})",
            found.element(),
            out["options"]
        ))
        .with_code("element_not_found"));
    }
    Ok(json!({"element": found.element(), "selected": out["selected"], "labels": out["labels"]}))
}

/// `browser_submit_form` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SubmitArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Wait for the page the form leads to (default true).
    #[serde(default = "yes")]
    pub wait_for_navigation: bool,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

fn yes() -> bool {
    true
}

pub(crate) async fn submit_form(
    b: &Browsers,
    args: SubmitArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.navigate_ms).await?;
    let marker = input::mark_document(&page).await?;
    let out = if args.address.is_empty() {
        let js = format!("{}.submit(document.activeElement)", *HELPERS);
        match cdp::evaluate(&page, &js, true).await? {
            Evaluated::Value(v) => v,
            Evaluated::Thrown(text) => {
                return Err(ToolError::transient(format!("submitting: {text}")));
            }
            Evaluated::Object(_) => Value::Null,
        }
    } else {
        let found = element(&page, &args.address, Want::Attached, timeout).await?;
        locate::helper(&page, &found, "submit", &[]).await?
    };
    if let Some(error) = out["error"].as_str() {
        return Err(ToolError::failed(error.to_string()).with_code("element_not_found"));
    }
    if let Some(invalid) = out["invalid"].as_array() {
        let list: Vec<&str> = invalid.iter().filter_map(Value::as_str).collect();
        return Err(
            ToolError::failed(format!("the form was not submitted: {}", list.join("; ")))
                .with_code("invalid_form"),
        );
    }
    let quiet = if args.wait_for_navigation {
        timeout
    } else {
        Duration::ZERO
    };
    let settled = input::settle(&page, &marker, quiet, timeout).await?;
    if args.wait_for_navigation && !settled.navigated {
        return Err(ToolError::failed(format!(
            "the form was submitted but no page followed within {} ms (a script may handle it; pass wait_for_navigation: false)",
            timeout.as_millis()
        ))
        .with_code("no_navigation"));
    }
    Ok(json!({
        "form": out["form"], "navigated": settled.navigated,
        "url": settled.url, "title": settled.title,
    }))
}

/// `browser_search` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to search for.
    pub query: String,
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_search`: fill the page's search box and submit it.
pub async fn search(b: &Browsers, args: SearchArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.search_ms).await?;
    let start = Instant::now();
    let found = if args.address.is_empty() {
        find_search_box(&page, timeout).await?
    } else {
        element(&page, &args.address, Want::Type, timeout).await?
    };
    let marker = input::mark_document(&page).await?;
    locate::helper(&page, &found, "clearField", &[]).await?;
    input::insert_text(&page, &args.query).await?;
    let enter = input::parse_chord("Enter")?;
    input::press(&page, &enter).await?;
    let left = timeout
        .saturating_sub(start.elapsed())
        .max(Duration::from_millis(500));
    let settled = input::settle(&page, &marker, Duration::from_millis(300), left).await?;
    Ok(json!({
        "box": found.element(), "query": args.query, "navigated": settled.navigated,
        "url": settled.url, "title": settled.title,
    }))
}

/// The search box: role searchbox or combobox, `input[type=search]`, or
/// a field named or labelled for search; waited for up to `timeout`.
async fn find_search_box(page: &Page, timeout: Duration) -> Result<Found, ToolError> {
    let js = format!("{}.searchBox()", *HELPERS);
    let js = &js;
    let found = poll(
        Some(page),
        timeout,
        Duration::from_millis(50),
        || async move {
            // Between documents the lookup fails; that is "not yet", not an error.
            if let Ok(Evaluated::Object(object)) = cdp::evaluate(page, js, false).await
                && let Ok(info) = locate::check(page, &object, Want::Type).await
            {
                return Ok(Some(Found { object, info }));
            }
            Ok(None)
        },
    )
    .await?;
    found.ok_or_else(|| {
        ToolError::failed(format!(
            "no search box on the page (role searchbox or combobox, input[type=search], or a field named search/query/q) after {} ms",
            timeout.as_millis()
        ))
        .with_code("element_not_found")
    })
}

/// One field of `browser_fill_form`.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Field {
    #[serde(flatten)]
    /// The field (exactly one of selector, ref, role, label, has_text; or
    /// `name` alone: the field the snapshot names so).
    pub address: Address,
    /// The field's kind as Playwright MCP gives it (textbox, checkbox,
    /// radio, combobox, slider): with `name` and no ref, its role.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Text to type, an option of a select, or true/false for a checkbox
    /// or radio button.
    pub value: FieldValue,
}

impl Field {
    /// The address as the other element tools take it. A field given as the
    /// snapshot names it (`{name: "Email"}`, or with Playwright MCP's
    /// `type`) is the field whose whole name that is; beside a `ref`, the
    /// name only describes it, and the ref decides.
    fn resolve(&mut self) {
        let a = &mut self.address;
        if a.reference.is_some() && a.role.is_none() {
            a.name = None;
        } else if a.role.is_none()
            && a.is_empty()
            && let Some(name) = a.name.take()
        {
            match self.kind.take() {
                Some(role) => {
                    a.role = Some(role);
                    a.name = Some(name);
                }
                None => a.label = Some(name),
            }
            a.exact = true;
        }
    }
}

/// A field's value.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FieldValue {
    /// Checked or not.
    Check(bool),
    /// Text, or an option's value or label.
    Text(String),
}

/// `browser_fill_form` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FillFormArgs {
    /// The fields, filled in this order.
    #[schemars(length(min = 1, max = 100))]
    pub fields: Vec<Field>,
    /// Max wait for each field, ms.
    pub timeout_ms: Option<u64>,
}

/// What a field is, read before it is filled.
const KIND: &str = "function() { return {tag: this.tagName.toLowerCase(), type: (this.type || '').toLowerCase(), role: (this.getAttribute('role') || '').toLowerCase(), checked: !!this.checked}; }";

/// Fill several fields in one call, one result per field. A field that
/// cannot be filled fails the call, naming it (`/fields/2: …`); the fields
/// before it stay filled.
pub(crate) async fn fill_form(
    b: &Browsers,
    args: FillFormArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.type_ms).await?;
    let mut filled = Vec::with_capacity(args.fields.len());
    for (i, mut field) in args.fields.into_iter().enumerate() {
        field.resolve();
        let field_at = format!("/fields/{i}");
        let at = |e: ToolError| super::under(&field_at, e);
        let found = element(&page, &field.address, Want::Visible, timeout)
            .await
            .map_err(at)?;
        let kind = match cdp::call_on(&page, &found.object, KIND, &[])
            .await
            .map_err(at)?
        {
            Evaluated::Value(kind) => kind,
            _ => Value::Null,
        };
        if kind["type"] == "password" {
            ctx.mark_secret(format!("/fields/{i}/value"));
        }
        let result = fill_one(b, &page, ctx, &field, &kind, timeout)
            .await
            .map_err(at)?;
        filled.push(json!({"element": found.element(), "filled": result}));
    }
    Ok(json!({ "fields": filled }))
}

/// Fill one field of `kind` (its tag, type and checked state).
async fn fill_one(
    b: &Browsers,
    page: &Page,
    ctx: &ToolContext,
    field: &Field,
    kind: &Value,
    timeout: Duration,
) -> Result<Value, ToolError> {
    let timeout_ms = Some(timeout.as_millis() as u64);
    let checkable = kind["type"] == "checkbox" || kind["type"] == "radio";
    // Playwright MCP sends a box's value as the text "true" or "false".
    let value = match (&field.value, checkable) {
        (FieldValue::Text(t), true) if t == "true" || t == "false" => {
            FieldValue::Check(t == "true")
        }
        (v, _) => v.clone(),
    };
    let drop_down =
        kind["tag"] == "select" || kind["role"] == "combobox" || kind["role"] == "listbox";
    match (&value, checkable) {
        (FieldValue::Check(want), true) => {
            if kind["checked"] != json!(want) {
                let found = element(page, &field.address, Want::Click, timeout).await?;
                let (x, y) = (
                    found.info["x"].as_f64().unwrap_or(0.0),
                    found.info["y"].as_f64().unwrap_or(0.0),
                );
                input::click_at(page, x, y).await?;
            }
            Ok(json!(want))
        }
        (FieldValue::Check(_), false) => Err(ToolError::invalid_arguments(
            "/value: true or false is for a checkbox or radio button; give text",
        )),
        (FieldValue::Text(_), true) => Err(ToolError::invalid_arguments(
            "/value: a checkbox or radio button takes true or false",
        )),
        (FieldValue::Text(text), false) if drop_down => {
            let args = SelectArgs {
                address: field.address.clone(),
                values: Some(OneOrMany::One(text.clone())),
                index: None,
                timeout_ms,
            };
            select_option(b, args, ctx)
                .await
                .map(|v| v["selected"].clone())
        }
        (FieldValue::Text(text), false) => {
            let args = super::elements::TypeArgs {
                text: text.clone(),
                address: field.address.clone(),
                clear: true,
                submit: false,
                timeout_ms,
            };
            let typed = super::elements::type_text(b, args, ctx).await?;
            Ok(json!({"chars": typed.chars}))
        }
    }
}

/// `browser_upload_file` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UploadArgs {
    #[serde(flatten)]
    /// The file input (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// File names in the files folder ([files] dir); several for a multiple
    /// input.
    #[schemars(length(min = 1, max = 20))]
    pub paths: Vec<String>,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// Give a file input files from the files folder, and only from there: a
/// page cannot be handed `/etc/passwd`.
pub async fn upload_file(
    b: &Browsers,
    args: UploadArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let dir = b.files(ctx, "/paths")?;
    let mut files = Vec::with_capacity(args.paths.len());
    for (i, name) in args.paths.iter().enumerate() {
        let field = format!("/paths/{i}");
        let path = dir.resolve(&field, name)?;
        // The name itself must be a file: a symlink planted in the folder
        // would hand the page whatever it points at (axon_core::files reads
        // refuse links the same way).
        if !tokio::fs::symlink_metadata(&path)
            .await
            .is_ok_and(|m| m.is_file())
        {
            return Err(ToolError::invalid_arguments(format!(
                "{field}: no file {name:?} in the files folder"
            ))
            .with_code("file_not_found")
            .at(&field));
        }
        files.push(path.to_string_lossy().into_owned());
    }
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.type_ms).await?;
    // File inputs are often hidden behind a styled button: attached is enough.
    let found = element(&page, &args.address, Want::Attached, timeout).await?;
    if found.info["tag"] != "input" {
        return Err(
            ToolError::failed(format!("{} is not a file input", found.element()))
                .with_code("element_not_interactable"),
        );
    }
    cdp::send(
        &page,
        "DOM.setFileInputFiles",
        json!({"files": files, "objectId": found.object}),
    )
    .await?;
    Ok(json!({"element": found.element(), "files": args.paths}))
}

/// Register this file's tools, all sharing `browsers`.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_select_option",
        idempotent(),
        "Selects options of a <select> by `values` or `index`; several values for a multi-select.",
        select_option
    );
    browser_tool!(
        registry,
        browsers,
        "browser_submit_form",
        acting(),
        "Submits a form (the addressed one, the focused element's, else the first) and waits for the next page; invalid fields fail with code invalid_form.",
        submit_form
    );
    browser_tool!(
        registry,
        browsers,
        "browser_search",
        acting(),
        "Finds the page's search box, types `query` and presses Enter.",
        search
    );
    browser_tool!(
        registry,
        browsers,
        "browser_fill_form",
        idempotent(),
        "Fills several fields in one call: text, a select's option, or true/false for a checkbox or radio.",
        fill_form
    );
    browser_tool!(
        registry,
        browsers,
        "browser_upload_file",
        idempotent(),
        "Sets a file input's files, by name from the files folder ([files] dir).",
        upload_file
    );
    Ok(())
}
