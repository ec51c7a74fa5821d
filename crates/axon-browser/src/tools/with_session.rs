//! How every browser tool takes `session`: [`WithSession`] wraps a tool,
//! takes the handle out of its arguments and sets it for the call, holds a
//! lease on the session while the call runs, and adds what the call changed
//! on the page to its result.

use std::sync::Arc;

use async_trait::async_trait;
use axon_core::{Tool, ToolContext, ToolError, ToolSpec};
use serde_json::{Value, json};

use crate::config::AfterAction;
use crate::session::{Browsers, HANDLE};

/// A browser tool that also takes `session`: the handle is taken out of the
/// arguments and set for the call (the tool reads it through
/// [`Browsers::page_for`]), so the tools' own argument types stay as they are.
///
/// The call holds a lease on its session ([`Browsers::lease`]) while it runs,
/// so the pool never closes a page a call is working on.
pub struct WithSession {
    inner: Arc<dyn Tool>,
    spec: ToolSpec,
    browsers: Arc<Browsers>,
    /// Whether the tool answers with the page's changes (`crate::changes`),
    /// and how long it settles first.
    changes: Option<Option<std::time::Duration>>,
    /// Whether the tool reads a dialog the session holds open and answers it
    /// itself (see [`WithSession::reading_held_dialogs`]).
    reads_dialogs: bool,
}

impl WithSession {
    /// Wrap `inner` so that it takes `session` and holds a lease on it.
    pub fn new(inner: impl Tool, browsers: Arc<Browsers>) -> Self {
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
            reads_dialogs: false,
        }
    }

    /// Run the tool even while the session holds a dialog open: it reads the
    /// dialog and answers it, or fails `dialog_open` itself (`browser_act`,
    /// axon-browser-act's heuristic/browser.rs). Other tools fail at once.
    pub fn reading_held_dialogs(mut self) -> Self {
        self.reads_dialogs = true;
        self
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
            Some((_, Some(_))) if self.reads_dialogs => return work.await,
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
