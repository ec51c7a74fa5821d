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

use axon_core::{Annotations, RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::SessionOptions;
use crate::session::{Browsers, SessionInfo};

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
