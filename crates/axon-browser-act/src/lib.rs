//! # axon-browser-act
//!
//! `browser_act`: one natural-language plan step in, exactly one browser action
//! out (the execution agent of docs/design.md, "Tools"), built on top of the
//! browser tools: it reaches the browser only through `axon_browser::layer`.
//!
//! The tool reads the page itself (URL and a compressed accessibility snapshot), asks an
//! [`ActionTranslator`] for one action, validates it against the snapshot, runs it with the
//! browser tools' own code, and answers with the execution output (action, args, status,
//! `error_type`, message, time) plus which translator decided and how sure it was. Two
//! translators: [`Heuristic`] (offline, deterministic; the default) and [`LlmTranslator`]
//! (any OpenAI-compatible chat-completions endpoint, called through the core pipeline as
//! the `llm_chat` tool).

#![warn(missing_docs)]

mod auto;
mod candidates;
mod dispatch;
mod heuristic;
mod llm;
mod prompt;
mod replay;
pub mod step_cache;

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use axon_core::{Annotations, RegistryError, ToolContext, ToolError, ToolRegistry, tool_fn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use auto::AutoTranslator;
pub use heuristic::Heuristic;
pub use llm::{LlmConfig, LlmConfigError, LlmTranslator, ResponseFormat, Translator};
pub use prompt::{CompressedSnapshot, MAX_PROMPT_NODES, compress};
pub use step_cache::{ActStore, CachedStep, MemoryActStore, NoActStore};

/// What a translator sees of the session's dialog and tabs (the browser reads them).
pub use axon_browser::layer::{PageDialog, PageTab};

use axon_browser::layer;
use axon_browser::{Browsers, Snapshot};

/// The execution agent's seven actions, plus `select` (an option of a drop-down),
/// which a plan step like "choose Green as the colour" needs and none of the seven
/// does, and the actions real pages need beyond those (issue 38): hover, drag,
/// upload, back and forward, answering a held dialog, switching and closing
/// tabs. Serialised by name (`"press_key"`), so the compiler checks every place
/// that dispatches on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionKind {
    /// Go to `url`.
    Navigate,
    /// Click the element.
    Click,
    /// Type `text` (into the element, or where the focus is).
    Type,
    /// Fill the page's search box with `text` and submit it.
    Search,
    /// Scroll the page a screen `up`/`down`, or `to` its `top`/`bottom`.
    Scroll,
    /// Press `key` (a chord such as `Control+a`).
    PressKey,
    /// Wait `seconds`.
    Wait,
    /// Pick the option `text` of the drop-down.
    Select,
    /// Move the pointer over the element (a menu that opens on hover).
    Hover,
    /// Drag the element onto the element whose ref is `onto`.
    Drag,
    /// Give the file input the file `text` (or the files `values`) from the
    /// files folder.
    Upload,
    /// Go back in the tab's history.
    GoBack,
    /// Go forward in the tab's history.
    GoForward,
    /// Answer the JavaScript dialog the session holds open: `accept`, and
    /// `text` for a prompt.
    HandleDialog,
    /// Make tab `index` (from 0) current.
    SelectTab,
    /// Close tab `index` (the current one when none is given).
    CloseTab,
}

impl ActionKind {
    /// Every action, in the order the prompt lists them.
    pub const ALL: [ActionKind; 16] = [
        ActionKind::Navigate,
        ActionKind::Click,
        ActionKind::Type,
        ActionKind::Search,
        ActionKind::Scroll,
        ActionKind::PressKey,
        ActionKind::Wait,
        ActionKind::Select,
        ActionKind::Hover,
        ActionKind::Drag,
        ActionKind::Upload,
        ActionKind::GoBack,
        ActionKind::GoForward,
        ActionKind::HandleDialog,
        ActionKind::SelectTab,
        ActionKind::CloseTab,
    ];

    /// The name an action goes by in JSON, metrics and the prompt.
    pub const fn as_str(self) -> &'static str {
        match self {
            ActionKind::Navigate => "navigate",
            ActionKind::Click => "click",
            ActionKind::Type => "type",
            ActionKind::Search => "search",
            ActionKind::Scroll => "scroll",
            ActionKind::PressKey => "press_key",
            ActionKind::Wait => "wait",
            ActionKind::Select => "select",
            ActionKind::Hover => "hover",
            ActionKind::Drag => "drag",
            ActionKind::Upload => "upload",
            ActionKind::GoBack => "go_back",
            ActionKind::GoForward => "go_forward",
            ActionKind::HandleDialog => "handle_dialog",
            ActionKind::SelectTab => "select_tab",
            ActionKind::CloseTab => "close_tab",
        }
    }

    /// The name a model gave, or why it is not an action (sent back to the model).
    pub fn parse(name: &str) -> Result<ActionKind, UnknownAction> {
        ActionKind::ALL
            .into_iter()
            .find(|a| a.as_str() == name)
            .ok_or_else(|| UnknownAction {
                name: name.to_string(),
            })
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The heuristic's confidence from which it acts without the model (`auto`
/// translation, [`AutoTranslator`]; the model's default threshold too).
pub const AUTO_THRESHOLD: f64 = 0.7;

/// The actions' names (the prompt and the reply schema list them).
pub const ACTIONS: [&str; 16] = {
    let mut names = [""; 16];
    let mut i = 0;
    while i < names.len() {
        names[i] = ActionKind::ALL[i].as_str();
        i += 1;
    }
    names
};

/// The actions' arguments (`url`, `role`, `name`, `text`, `direction`, `key`, `seconds`),
/// plus `ref` (the element the translator picked) and `to` (scroll to the top or bottom).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActionArgs {
    /// `navigate`: where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `click`, `type`, `select`: the element's ARIA role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// `click`, `type`, `select`: the element's accessible name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `type`, `search`: the text; `select`: the option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `scroll`: up or down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// `press_key`: the key; `type`: `Enter` to submit after typing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `wait`: how long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// The snapshot ref of the element (more precise than role + name).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// `scroll`: `top` or `bottom` instead of a direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// `select`: several options; `upload`: several files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// `drag`: the ref of the element to drop onto.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onto: Option<String>,
    /// `handle_dialog`: OK (true) or Cancel (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<bool>,
    /// `select_tab`, `close_tab`: the tab, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
}

/// One action, chosen for one plan step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Action {
    /// Which action.
    pub action: ActionKind,
    /// Its arguments.
    pub args: ActionArgs,
}

/// What a translator decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The action.
    pub action: Action,
    /// How sure the translator is, 0..=1.
    pub confidence: f64,
    /// Why (one sentence).
    pub message: String,
}

/// What a translator sees.
#[derive(Clone, Debug)]
pub struct StepInput {
    /// The overall goal (context only).
    pub main_goal: String,
    /// The one step to carry out.
    pub plan_step: String,
    /// The current URL.
    pub url: String,
    /// The page's interactive elements and the text near them (empty while
    /// a dialog is held open: the page answers nothing until it is answered).
    pub snapshot: CompressedSnapshot,
    /// The JavaScript dialog the session holds open, if any (sessions opened
    /// with `hold_dialogs`).
    pub dialog: Option<PageDialog>,
    /// The session's tabs, read for a step that speaks of a tab, a window or
    /// a popup ([`names_tabs`]); empty otherwise.
    pub tabs: Vec<PageTab>,
}

/// Whether a step speaks of the browser's tabs or windows ("switch to the
/// new tab", "close the popup window"): only then are the tabs read for the
/// translator (one CDP round trip saved on every other step).
pub fn names_tabs(step: &str) -> bool {
    let lower = step.to_lowercase();
    ["tab", "tabs", "window", "windows", "popup", "pop-up"]
        .iter()
        .any(|w| {
            lower
                .split(|c: char| !c.is_alphanumeric() && c != '-')
                .any(|t| t == *w)
        })
}

/// How a translator says it cannot act: the browser error taxonomy (`element_not_found`,
/// `ambiguous_step`, `tool_limit`, `navigation_blocked`, `unknown`) in `code`
/// (`ambiguous_step`, `element_not_found`, `tool_limit`, `unknown`).
pub type TranslateError = ToolError;

/// Turns a plan step into one action.
#[async_trait]
pub trait ActionTranslator: Send + Sync + 'static {
    /// Its name in results (`heuristic`, `llm`).
    fn name(&self) -> &'static str;
    /// One action for `input`, or why there is none.
    async fn translate(
        &self,
        input: &StepInput,
        ctx: &ToolContext,
    ) -> Result<Decision, TranslateError>;
}

/// `browser_act` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActArgs {
    /// One step of a plan, in words ("Click the Log in button").
    pub plan_step: String,
    /// The overall goal, for context.
    #[serde(default)]
    pub main_goal: Option<String>,
}

/// The execution output (docs/design.md, "Tools"), plus which translator decided, how sure it
/// was, and where the time went.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExecutionOutput {
    /// The action run.
    pub action: String,
    /// Its arguments.
    pub args: Value,
    /// `success` (a failure is the call's error, with `error_type` as code).
    pub status: String,
    /// `none` on success.
    pub error_type: String,
    /// What was done, in one sentence.
    pub message: String,
    /// The whole step: reading the page, deciding, acting.
    pub execution_time_ms: u64,
    /// `heuristic` or `llm`.
    pub translator: String,
    /// The translator's confidence, 0..=1.
    pub confidence: f64,
    /// Time reading the page.
    pub snapshot_ms: u64,
    /// Time spent deciding (the LLM call, or the heuristic).
    pub decide_ms: u64,
    /// Time running the action.
    pub dispatch_ms: u64,
    /// Time waiting for the requests and DOM changes the action started to go
    /// quiet (docs/browser-act.md, "Settle"). The schema's description is
    /// shorter: it is in every MCP listing.
    #[schemars(description = "Time waiting for the page to settle.")]
    pub settle_ms: u64,
    /// The compressed snapshot's size in tokens (about 4 characters each).
    pub snapshot_tokens: usize,
    /// `hit` when the act cache had this step for a page of this shape (no
    /// translator was called), `miss` when it was translated.
    #[schemars(description = "Act cache: hit or miss.")]
    pub cache: String,
    /// The browser tool call this step made, the element by role and name
    /// (stable across page loads, unlike a ref): a plan can replay it as a
    /// deterministic step, with no translator.
    #[schemars(description = "The browser tool call made, to replay.")]
    pub call: ReplayCall,
}

/// A browser tool call that does what a `browser_act` step did.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ReplayCall {
    /// The browser tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
}

/// The `error_type` of the browser taxonomy for a tool error code.
///
/// The seed's six types, widened by the element-state codes the explicit
/// browser tools already answer with: an element that was found but could
/// not take the action (`disabled`, `not_editable`, `not_a_select`,
/// `element_not_interactable`, `element_detached`) is no "unexpected error"
/// — the agent can act on what it says, and it reads the same word from
/// `browser_act` as from `browser_click` (docs/browser-act.md, "Refusals an
/// agent can act on").
pub fn error_type(code: Option<&str>) -> &'static str {
    match code {
        Some("element_not_found") => "element_not_found",
        Some("ambiguous_step") => "ambiguous_step",
        Some("tool_limit") => "tool_limit",
        Some("dialog_open") => "dialog_open",
        Some("navigation_blocked" | "navigation_failed" | "navigation_timeout") => {
            "navigation_blocked"
        }
        Some("disabled") => "disabled",
        Some("not_editable") => "not_editable",
        Some("not_a_select") => "not_a_select",
        Some("element_not_interactable") => "element_not_interactable",
        Some("element_detached") => "element_detached",
        _ => "unknown",
    }
}

/// Register `browser_act` with `translator` and an act cache in memory.
pub fn register(
    registry: &mut ToolRegistry,
    browsers: Arc<Browsers>,
    translator: Arc<dyn ActionTranslator>,
) -> Result<(), RegistryError> {
    register_with_cache(
        registry,
        browsers,
        translator,
        Arc::new(MemoryActStore::default()),
    )
}

/// Register `browser_act` with `translator`, keeping translated steps in
/// `cache` (see [`cache`]).
pub fn register_with_cache(
    registry: &mut ToolRegistry,
    browsers: Arc<Browsers>,
    translator: Arc<dyn ActionTranslator>,
    cache: Arc<dyn ActStore>,
) -> Result<(), RegistryError> {
    let leases = browsers.clone();
    registry.register(layer::WithSession::new(
        tool_fn(
            "browser_act",
            "Carries out one plan step given in words (\"Click the Log in button\"): reads the page, picks one action and runs it; one action per step. Failure codes: element_not_found, ambiguous_step (both list the candidate elements with refs to act on), disabled, not_editable, not_a_select, element_not_interactable (the element found could not take the action; it is the first candidate), tool_limit, navigation_blocked, unknown.",
            move |args: ActArgs, ctx: ToolContext| {
                let b = browsers.clone();
                let t = translator.clone();
                let c = cache.clone();
                async move {
                    let step = act(&b, t.as_ref(), c.as_ref(), args, &ctx);
                    layer::traced("browser_act", step).await
                }
            },
        )
        // It may click or submit: not repeated after an attempt that may have acted.
        .annotations(Annotations { open_world: true, idempotent: false, ..Annotations::default() }),
        leases,
    )
    .reading_held_dialogs())
}

async fn act(
    browsers: &Browsers,
    translator: &dyn ActionTranslator,
    store: &dyn ActStore,
    args: ActArgs,
    ctx: &ToolContext,
) -> Result<ExecutionOutput, ToolError> {
    let started = Instant::now();
    if args.plan_step.trim().is_empty() {
        return Err(ToolError::invalid_arguments("/plan_step: is empty"));
    }
    let page = browsers.page_for(ctx).await?;
    let (snap, input) = read_step(browsers, &page, args, ctx).await?;
    let snapshot_ms = started.elapsed().as_millis() as u64;
    // What the dialog and the tabs are is not in the page's shape: such
    // steps are translated every time.
    let cacheable = input.dialog.is_none() && input.tabs.is_empty();
    let deciding = Instant::now();
    let key = step_cache::key(&input.plan_step, &snap.url, &snap.nodes);
    let cached = match cacheable {
        true => match store.get(&key).await {
            Some(entry) => step_cache::revalidate(&entry, &snap.nodes),
            None => None,
        },
        false => None,
    };
    let hit = cached.is_some();
    let decided = match cached {
        Some(decision) => Ok(decision),
        None => translator.translate(&input, ctx).await,
    };
    let decide_ms = deciding.elapsed().as_millis() as u64;
    metrics::counter!("browser_act_cache_total", "result" => if hit { "hit" } else { "miss" })
        .increment(1);
    metrics::histogram!("browser_act_decide_ms", "translator" => translator.name())
        .record(decide_ms as f64);
    let decision = match decided {
        Ok(d) => d,
        Err(e) => {
            let kind = error_type(e.code.as_deref());
            count("none", kind);
            let e = candidates::offer(e, &input.snapshot.nodes, &input.plan_step);
            return Err(candidates::in_message(e));
        }
    };
    let call = replay::replay(&decision.action, &snap.nodes);
    // Requests and mutations are watched from before the action, so that none
    // it starts is missed.
    let settle_limit = dispatch::settles(decision.action.action, browsers);
    let watch = match settle_limit {
        Some(_) => layer::watch(&page).await,
        None => None,
    };
    let acting = Instant::now();
    let outcome = dispatch::run(browsers, &decision.action, &snap.nodes, ctx).await;
    let dispatch_ms = acting.elapsed().as_millis() as u64;
    let settle_ms = match (&outcome, watch, settle_limit) {
        (Ok(()), Some(watch), Some(limit)) => {
            layer::settle(&page, watch, limit).await.waited.as_millis() as u64
        }
        _ => 0,
    };
    let browser_ms = snapshot_ms + dispatch_ms + settle_ms;
    metrics::histogram!("browser_act_browser_ms", "action" => decision.action.action.as_str())
        .record(browser_ms as f64);
    // A translation that worked is kept; a kept one that failed is dropped, so
    // that the next try translates afresh.
    match (&outcome, hit) {
        (Ok(()), false) if cacheable => {
            if let Some(entry) = step_cache::entry(&decision, &snap.nodes) {
                store.put(&key, &entry).await;
            }
        }
        (Err(_), true) => store.remove(&key).await,
        _ => {}
    }
    if let Err(e) = outcome {
        let e = failed(&decision.action, e);
        let e = candidates::after_acting(e, &decision.action, &snap.nodes, &input.plan_step);
        return Err(candidates::in_message(e));
    }
    count(decision.action.action.as_str(), "none");
    Ok(ExecutionOutput {
        action: decision.action.action.as_str().to_string(),
        args: serde_json::to_value(&decision.action.args).unwrap_or(Value::Null),
        status: "success".into(),
        error_type: "none".into(),
        message: decision.message,
        execution_time_ms: started.elapsed().as_millis() as u64,
        translator: translator.name().into(),
        confidence: decision.confidence,
        snapshot_ms,
        decide_ms,
        dispatch_ms,
        settle_ms,
        snapshot_tokens: input.snapshot.tokens,
        cache: if hit { "hit" } else { "miss" }.into(),
        call,
    })
}

/// What a translator reads for a step: the page (not read while a dialog
/// is held open: it would not answer, and the step may answer the dialog),
/// compressed, and the session's tabs when the step speaks of them.
async fn read_step(
    browsers: &Browsers,
    page: &layer::Page,
    args: ActArgs,
    ctx: &ToolContext,
) -> Result<(Snapshot, StepInput), ToolError> {
    let dialog = browsers.held_dialog(ctx).await;
    let snap = match &dialog {
        Some(_) => Snapshot::default(),
        None => layer::snapshot(page, 2000).await?,
    };
    let tabs = match dialog.is_none() && names_tabs(&args.plan_step) {
        true => browsers.tab_list(ctx).await?,
        false => Vec::new(),
    };
    let input = StepInput {
        main_goal: args.main_goal.unwrap_or_default(),
        plan_step: args.plan_step,
        url: snap.url.clone(),
        snapshot: compress(&snap.nodes, prompt::MAX_PROMPT_NODES),
        dialog,
        tabs,
    };
    Ok((snap, input))
}

/// A decided action that failed, counted, with the action and its
/// arguments in the message and its error type as the code.
fn failed(action: &Action, e: ToolError) -> ToolError {
    let kind = error_type(e.code.as_deref());
    count(action.action.as_str(), kind);
    let message = format!(
        "{} {} failed: {}",
        action.action,
        serde_json::to_string(&action.args).unwrap_or_default(),
        e.message
    );
    ToolError {
        message,
        code: Some(kind.to_string()),
        ..e
    }
}

/// The execution metrics (docs/browser-act.md): actions by outcome, errors by type.
fn count(action: &str, error_type: &'static str) {
    metrics::counter!("browser_act_actions_total", "action" => action.to_string(), "error_type" => error_type)
        .increment(1);
}

/// A name that is none of the actions (a model's reply); the message, with
/// the allowed names, goes back to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownAction {
    /// The name given.
    pub name: String,
}

impl std::fmt::Display for UnknownAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} is not an allowed action (allowed: {})",
            self.name,
            ACTIONS.join(", ")
        )
    }
}

impl std::error::Error for UnknownAction {}

/// Check an action against the snapshot: the arguments it needs, and a click/type/select target
/// that the snapshot has. The error says what is wrong, for the LLM's retry.
pub(crate) fn validate(action: &Action, snapshot: &CompressedSnapshot) -> Result<(), String> {
    let a = &action.args;
    let need = |v: &Option<String>, field: &str| match v {
        Some(s) if !s.trim().is_empty() => Ok(()),
        _ => Err(format!("{} needs args.{field}", action.action)),
    };
    match action.action {
        ActionKind::Navigate => need(&a.url, "url"),
        ActionKind::Type | ActionKind::Search => need(&a.text, "text"),
        ActionKind::PressKey => {
            need(&a.key, "key")?;
            layer::check_chord(a.key.as_deref().unwrap_or_default()).map_err(|e| e.message)
        }
        ActionKind::Scroll => match (a.direction.as_deref(), a.to.as_deref()) {
            (Some("up" | "down"), _) | (_, Some("top" | "bottom")) => Ok(()),
            _ => Err("scroll needs args.direction \"up\" or \"down\"".into()),
        },
        ActionKind::Wait => match a.seconds {
            Some(s) if (0.0..=60.0).contains(&s) => Ok(()),
            _ => Err("wait needs args.seconds between 0 and 60".into()),
        },
        ActionKind::Click => target_in_snapshot(a, snapshot),
        ActionKind::Select | ActionKind::Upload => {
            if a.values.as_ref().is_none_or(|v| v.is_empty()) {
                need(&a.text, "text")?;
            }
            target_in_snapshot(a, snapshot)
        }
        ActionKind::Hover => target_in_snapshot(a, snapshot),
        ActionKind::Drag => {
            need(&a.onto, "onto")?;
            let onto = a.onto.as_deref().unwrap_or_default();
            if !snapshot
                .nodes
                .iter()
                .any(|n| n.reference.as_deref() == Some(onto))
            {
                return Err(format!("drag: onto {onto} is not a ref in DOM_SNAPSHOT"));
            }
            target_in_snapshot(a, snapshot)
        }
        ActionKind::GoBack | ActionKind::GoForward | ActionKind::CloseTab => Ok(()),
        ActionKind::HandleDialog => match a.accept {
            Some(_) => Ok(()),
            None => Err("handle_dialog needs args.accept (true or false)".into()),
        },
        ActionKind::SelectTab => match a.index {
            Some(_) => Ok(()),
            None => Err("select_tab needs args.index from TABS".into()),
        },
    }
}

fn target_in_snapshot(a: &ActionArgs, snapshot: &CompressedSnapshot) -> Result<(), String> {
    if let Some(r) = &a.reference {
        return if snapshot
            .nodes
            .iter()
            .any(|n| n.reference.as_deref() == Some(r))
        {
            Ok(())
        } else {
            Err(format!("ref {r} is not in DOM_SNAPSHOT"))
        };
    }
    let (Some(role), Some(name)) = (&a.role, &a.name) else {
        return Err("a click needs args.role and args.name from DOM_SNAPSHOT".into());
    };
    if snapshot
        .nodes
        .iter()
        .any(|n| n.role == *role && axon_browser::layer::name_matches(&n.name, name, false))
    {
        Ok(())
    } else {
        Err(format!("no {role} named {name:?} in DOM_SNAPSHOT"))
    }
}
