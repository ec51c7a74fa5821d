//! Browser sessions as handles: `browser_session_new` opens a session (a
//! browser context of its own, optionally started from a saved storage state)
//! and returns its handle; every browser tool takes that handle as `session`.
//!
//! MCP revision 2026-07-28 has no protocol sessions, so server state travels in
//! handles passed as arguments; this is how an agent keeps two logins apart, or
//! saves a logged-in state in one run and starts from it in the next. A call
//! without `session` uses its connection's default session (its correlation id:
//! the `axon mcp` process, a legacy MCP session, a plan run).

use std::sync::Arc;

use async_trait::async_trait;
use axon_core::{Annotations, RegistryError, Tool, ToolContext, ToolError, ToolRegistry, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::AfterAction;
use crate::session::{Browsers, HANDLE, SessionInfo, SessionOptions};
use crate::tools::browser_fn;

/// A browser tool that also takes `session`: the handle is taken out of the
/// arguments and set for the call (the tool reads it through
/// [`Browsers::page_for`]), so the tools' own argument types stay as they are.
///
/// The call holds a lease on its session ([`Browsers::lease`]) while it runs,
/// so the pool never closes a page a call is working on.
pub(crate) struct WithSession {
    inner: Arc<dyn Tool>,
    spec: ToolSpec,
    browsers: Arc<Browsers>,
    /// Whether the tool answers with the page's changes (`crate::changes`),
    /// and how long it settles first.
    changes: Option<Option<std::time::Duration>>,
}

impl WithSession {
    pub(crate) fn new(inner: impl Tool, browsers: Arc<Browsers>) -> Self {
        let mut spec = inner.spec().clone();
        let changes = crate::changes::part(&spec.name, &browsers);
        // No description for `session`: browser_session_new's says where the
        // handle goes, and 25 copies of one would cost every agent tokens on
        // every turn. Nor for `snapshot` (what the action answers of the page
        // after it: its choices say it, and docs/design.md).
        let mut extra = serde_json::Map::new();
        extra.insert("session".into(), json!({"type": "string"}));
        if changes.is_some() {
            extra.insert(
                "snapshot".into(),
                json!({"enum": ["changes", "full", "none"]}),
            );
        }
        if let Some(props) = spec.input_schema["properties"].as_object_mut() {
            props.extend(extra);
        } else if let Some(schema) = spec.input_schema.as_object_mut() {
            schema.insert("properties".into(), Value::Object(extra));
        }
        WithSession {
            inner: Arc::new(inner),
            spec,
            browsers,
            changes,
        }
    }
}

#[async_trait]
impl Tool for WithSession {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: &Value, ctx: ToolContext) -> Result<Value, ToolError> {
        let handle = args.get("session").and_then(Value::as_str);
        let session = match handle {
            Some(handle) => handle.to_string(),
            None => Browsers::default_session(&ctx),
        };
        let _lease = self.browsers.lease(&session);
        let mut rest = args.clone();
        let mut show = self.browsers.config().snapshot_after_action;
        if let Some(map) = rest.as_object_mut() {
            map.remove("session");
            if self.changes.is_some()
                && let Some(asked) = map.remove("snapshot")
            {
                show = serde_json::from_value(asked).map_err(|_| {
                    ToolError::invalid_arguments(
                        "/snapshot: expected \"changes\", \"full\" or \"none\"",
                    )
                })?;
            }
        }
        // A recorded action keeps a frame (recording.rs); a read-only tool
        // changes nothing worth one.
        let recorded = !self.spec.annotations.read_only
            && self.browsers.may_record(&session, ctx.owner()).await;
        let kept = recorded.then(|| ctx.clone());
        let work = self.acted(&session, &rest, ctx, show);
        let work = async {
            match handle {
                Some(handle) => HANDLE.scope(Arc::from(handle), work).await,
                None => work.await,
            }
        };
        let (out, target) = match recorded {
            true => crate::recording::watching(work).await,
            false => (work.await, None),
        };
        if let Some(ctx) = kept {
            let action = crate::recording::Action {
                call_id: ctx.call_id(),
                tool: &self.spec.name,
                args: ctx.masked(&rest),
                error: out.as_ref().err(),
                target,
            };
            self.browsers.record(&session, ctx.owner(), action).await;
        }
        self.report(&session, out).await
    }

    fn safe_to_repeat(&self, args: &Value) -> bool {
        // Typing is harmless to repeat; pressing Enter after it submits.
        if self.spec.name == "browser_type" && args["submit"] == json!(true) {
            return false;
        }
        self.inner.safe_to_repeat(args)
    }
}

impl WithSession {
    /// Run the tool (guarded against dialogs), and for a tool that answers
    /// with the page's changes, watch the page before and read it after.
    async fn acted(
        &self,
        session: &str,
        args: &Value,
        ctx: ToolContext,
        show: AfterAction,
    ) -> Result<Value, ToolError> {
        let Some(settles) = self.changes.filter(|_| show != AfterAction::None) else {
            return self.guarded(session, self.inner.call(args, ctx)).await;
        };
        // A page whose dialog is held open runs no script until it is
        // answered: the action fails `dialog_open` at once (guarded), and is
        // not kept waiting on a look at the page first.
        let held_open = matches!(self.browsers.dialogs_of(session).await, Some((_, Some(_))));
        if held_open && settles.is_some() {
            return self.guarded(session, self.inner.call(args, ctx)).await;
        }
        let before = crate::changes::before(&self.browsers, &ctx, settles).await;
        let done = self
            .guarded(session, self.inner.call(args, ctx.clone()))
            .await;
        let mut data = match done {
            Ok(data) => data,
            Err(e) => {
                if let Some(before) = before {
                    crate::changes::forget(before);
                }
                return Err(e);
            }
        };
        if let Some(before) = before
            && let Some(changes) = crate::changes::after(&self.browsers, &ctx, before, show).await
            && let Some(map) = data.as_object_mut()
        {
            map.insert("changes".into(), changes);
        }
        Ok(data)
    }
}

impl WithSession {
    /// Run the call's `work` so that no dialog the session holds open
    /// (dialogs.rs) makes it wait: with one open already, it fails
    /// `dialog_open` at once (but for the tools that answer or list); when
    /// one opens while it runs, it returns then, failing the same way.
    async fn guarded(
        &self,
        session: &str,
        work: impl std::future::Future<Output = Result<Value, ToolError>>,
    ) -> Result<Value, ToolError> {
        let exempt = matches!(
            self.spec.name.as_str(),
            "browser_handle_dialog" | "browser_tabs"
        );
        let mode = match self.browsers.dialogs_of(session).await {
            // browser_act reads the open dialog and answers it, or fails
            // dialog_open itself (act::heuristic::browser).
            Some((_, Some(_))) if self.spec.name == "browser_act" => return work.await,
            Some((_, Some(open))) if !exempt => return Err(crate::dialogs::dialog_open(&open)),
            Some((mode, _)) if mode.hold && !exempt => mode,
            _ => return work.await,
        };
        let mut work = std::pin::pin!(work);
        loop {
            tokio::select! {
                out = &mut work => return out,
                _ = mode.opened.notified() => {
                    // A permit left from an earlier dialog wakes this too.
                    if let Some((_, Some(open))) = self.browsers.dialogs_of(session).await {
                        return Err(crate::dialogs::dialog_open(&open));
                    }
                }
            }
        }
    }

    /// Add what happened to the session during the call to its data: the
    /// dialogs its tabs answered (`dialogs`, dialogs.rs) — the click that
    /// opened "Delete it?" says so, and that it was dismissed — and the tabs
    /// when one opened or closed (`tabs`, tabs.rs), and the downloads that
    /// began or ended (`downloads`, downloads.rs).
    async fn report(
        &self,
        session: &str,
        out: Result<Value, ToolError>,
    ) -> Result<Value, ToolError> {
        let mut data = out?;
        // A tool that may act on the page may have asked for a download.
        let acted = !self.spec.annotations.read_only;
        let report = self.browsers.report(session, acted).await;
        if let Some(map) = data.as_object_mut() {
            if !report.dialogs.is_empty() {
                map.insert("dialogs".into(), json!(report.dialogs));
            }
            if let Some(tabs) = report.tabs {
                map.entry("tabs").or_insert(json!(tabs));
            }
            if !report.downloads.is_empty() {
                map.insert("downloads".into(), json!(report.downloads));
            }
        }
        Ok(data)
    }
}

/// `browser_session_new` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSessionArgs {
    /// Cookies and localStorage to start from (a storage state, as
    /// browser_session_save returns it).
    pub storage_state: Option<serde_json::Map<String, Value>>,
    /// Or a file name browser_session_save wrote.
    pub storage_state_path: Option<String>,
    /// CSS pixels.
    pub viewport: Option<ViewportSize>,
    /// Whether a tab the page opens becomes current (default: [browser]
    /// follow_new_tabs, on).
    pub follow_new_tabs: Option<bool>,
    /// Keep dialogs open for browser_handle_dialog (default: [browser]
    /// hold_dialogs, off: answered at once).
    pub hold_dialogs: Option<bool>,
    /// Keep a filmstrip of its actions: off, on_failure or always (default:
    /// [browser] record, off); browser_recording exports it.
    pub record: Option<crate::config::Record>,
}

/// A viewport size in CSS pixels.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewportSize {
    #[schemars(range(min = 100, max = 10000))]
    #[allow(missing_docs)]
    pub width: u32,
    #[schemars(range(min = 100, max = 10000))]
    #[allow(missing_docs)]
    pub height: u32,
}

/// A session handle.
#[derive(Serialize, JsonSchema)]
pub struct Opened {
    /// Pass as `session` to any browser tool.
    pub session: String,
}

/// `browser_session_save` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveArgs {
    /// The session (default: this connection's).
    pub session: Option<String>,
    /// Save to this file name (in the files directory); else it is returned.
    pub path: Option<String>,
    /// Replace an existing file.
    #[serde(default)]
    pub overwrite: bool,
}

/// `browser_session_close` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseArgs {
    /// The session (default: this connection's).
    pub session: Option<String>,
}

/// The open sessions.
#[derive(Serialize, JsonSchema)]
pub struct Listed {
    /// Most recently used first.
    pub sessions: Vec<SessionInfo>,
}

/// Whether a session was open.
#[derive(Serialize, JsonSchema)]
pub struct Closed {
    /// False when no such session was open.
    pub closed: bool,
}

fn session_tool() -> Annotations {
    Annotations {
        idempotent: false,
        open_world: true,
        ..Annotations::default()
    }
}

/// The largest storage state file read (cookies and localStorage of a few
/// origins are kilobytes).
const MAX_STORAGE_STATE: u64 = 16 << 20;

/// Register the session tools (they take `session` as an argument of their
/// own, so they are not wrapped in [`WithSession`]).
pub(crate) fn register(
    registry: &mut ToolRegistry,
    browsers: Arc<Browsers>,
) -> Result<(), RegistryError> {
    registry.register(
        browser_fn!(
            browsers,
            "browser_session_new",
            "Opens a browser session (own cookies and storage), optionally from a saved storage state; pass its handle as `session` to browser tools.",
            new_session
        )
        .annotations(session_tool()),
    )?;
    registry.register(
        browser_fn!(
            browsers,
            "browser_session_save",
            "Saves a session's cookies and localStorage (storage state) to `path`, or returns it.",
            save
        )
        .annotations(Annotations {
            read_only: true,
            open_world: true,
            ..Annotations::default()
        })
        .without_output_schema(),
    )?;
    registry.register(
        browser_fn!(
            browsers,
            "browser_session_list",
            "Lists the open browser sessions.",
            list
        )
        .read_only(),
    )?;
    registry.register(
        browser_fn!(
            browsers,
            "browser_session_close",
            "Closes a browser session (its page and cookies).",
            close
        )
        .annotations(Annotations {
            idempotent: true,
            destructive: true,
            open_world: true,
            ..Annotations::default()
        }),
    )?;
    Ok(())
}

async fn list(
    b: &Browsers,
    _: crate::tools::NoArgs,
    ctx: &ToolContext,
) -> Result<Listed, ToolError> {
    Ok(Listed {
        sessions: b.sessions_of(ctx.owner()).await,
    })
}

async fn close(b: &Browsers, args: CloseArgs, ctx: &ToolContext) -> Result<Closed, ToolError> {
    let session = args
        .session
        .unwrap_or_else(|| Browsers::default_session(ctx));
    Ok(Closed {
        closed: b.close_as(&session, ctx.owner()).await,
    })
}

async fn new_session(
    b: &Browsers,
    args: NewSessionArgs,
    ctx: &ToolContext,
) -> Result<Opened, ToolError> {
    // Cookie values are secrets: the inline state is never stored in history.
    ctx.mark_secret("/storage_state");
    let storage_state = match (args.storage_state, args.storage_state_path) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid_arguments(
                "/storage_state_path: give storage_state or storage_state_path, not both",
            ));
        }
        (Some(state), None) => Some(Value::Object(state)),
        (None, Some(name)) => {
            let field = "/storage_state_path";
            let text = b
                .files(ctx, field)?
                .read(field, &name, MAX_STORAGE_STATE)
                .await?;
            Some(serde_json::from_slice(&text).map_err(|e| {
                ToolError::invalid_arguments(format!(
                    "/storage_state_path: {name} is not a storage state: {e}"
                ))
            })?)
        }
        (None, None) => None,
    };
    if let Some(state) = &storage_state
        && !(state.is_object()
            && state.get("cookies").is_none_or(Value::is_array)
            && state.get("origins").is_none_or(Value::is_array))
    {
        return Err(ToolError::invalid_arguments(
            "/storage_state: want {\"cookies\": [...], \"origins\": [...]}",
        ));
    }
    let session = format!("bs-{}", ulid::Ulid::new());
    b.open_session(
        &session,
        SessionOptions {
            storage_state,
            viewport: args.viewport.map(|v| (v.width, v.height)),
            owner: ctx.owner().clone(),
            follow_new_tabs: args.follow_new_tabs,
            hold_dialogs: args.hold_dialogs,
            record: args.record,
        },
    )
    .await?;
    Ok(Opened { session })
}

async fn save(b: &Browsers, args: SaveArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let session = args.session.unwrap_or_else(|| Browsers::session_for(ctx));
    if let Some(name) = &args.path {
        b.files(ctx, "/path")?.resolve("/path", name)?;
    }
    let state = b.storage_state(&session, ctx.owner()).await?;
    match args.path {
        Some(name) => {
            let files = b.files(ctx, "/path")?;
            let text = serde_json::to_vec_pretty(&state)
                .map_err(|e| ToolError::internal(format!("storage state: {e}")))?;
            let written = files.write("/path", &name, text, args.overwrite).await?;
            Ok(json!({"session": session, "path": written.name, "bytes": written.bytes}))
        }
        // Cookie values and localStorage: the caller gets them, history does not.
        None => {
            ctx.mark_secret_output("/storage_state");
            Ok(json!({"session": session, "storage_state": state}))
        }
    }
}
