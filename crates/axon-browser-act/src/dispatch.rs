//! Running a decided action with the browser tools' own code, and how long
//! the page may settle after it.

use axon_core::{ToolContext, ToolError};

use axon_browser::layer::{self, DragArgs, HistoryArgs, NavigateArgs, UploadArgs};
use axon_browser::{
    Address, Browsers, ClickArgs, Direction, Edge, ElementArgs, OneOrMany, PressKeyArgs,
    ScrollArgs, SearchArgs, SelectArgs, SnapshotNode, TypeArgs, WaitArgs,
};

use super::{Action, ActionArgs, ActionKind};

/// Run `action` with the browser tools' code. The element is addressed by its
/// ref when the translator gave one, else by role + name.
pub(super) async fn run(
    browsers: &Browsers,
    action: &Action,
    nodes: &[SnapshotNode],
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    match action.action {
        ActionKind::Click
        | ActionKind::Type
        | ActionKind::Select
        | ActionKind::Hover
        | ActionKind::Drag
        | ActionKind::Upload => on_element(browsers, action, nodes, ctx).await,
        _ => on_page(browsers, action, ctx).await,
    }
}

/// `args.<field>` is missing for `action`.
fn missing(action: &Action, field: &str) -> ToolError {
    ToolError::invalid_arguments(format!("{}: needs args.{field}", action.action))
}

/// The actions on an element of the page: click, type, select, hover, drag,
/// upload.
async fn on_element(
    browsers: &Browsers,
    action: &Action,
    nodes: &[SnapshotNode],
    ctx: &ToolContext,
) -> Result<(), ToolError> {
    let a = &action.args;
    let missing = |field: &str| missing(action, field);
    match action.action {
        ActionKind::Click => {
            let args = ClickArgs {
                address: address(a, nodes),
                fallback: a.reference.is_none(),
                timeout_ms: None,
            };
            layer::click(browsers, args, ctx).await.map(drop)
        }
        ActionKind::Type => {
            let text = a.text.clone().ok_or_else(|| missing("text"))?;
            // No element named: type where the focus is.
            let target = if a.reference.is_some() || a.role.is_some() {
                address(a, nodes)
            } else {
                Address::default()
            };
            let clear = !target.is_empty();
            let args = TypeArgs {
                text,
                address: target,
                clear,
                // "Type … and press Enter": submitted in the same call.
                submit: a.key.as_deref() == Some("Enter"),
                timeout_ms: None,
            };
            layer::type_text(browsers, args, ctx).await.map(drop)
        }
        ActionKind::Select => {
            let values = match (&a.values, &a.text) {
                (Some(many), _) if !many.is_empty() => OneOrMany::Many(many.clone()),
                (_, Some(one)) => OneOrMany::One(one.clone()),
                _ => return Err(missing("text")),
            };
            let args = SelectArgs {
                address: address(a, nodes),
                values: Some(values),
                index: None,
                timeout_ms: None,
            };
            layer::select_option(browsers, args, ctx).await.map(drop)
        }
        ActionKind::Hover => {
            let args = ElementArgs {
                address: address(a, nodes),
                timeout_ms: None,
            };
            layer::hover(browsers, args, ctx).await.map(drop)
        }
        ActionKind::Drag => {
            let onto = a.onto.clone().ok_or_else(|| missing("onto"))?;
            let args = DragArgs {
                source: address(a, nodes),
                target: onto_address(onto, nodes),
                timeout_ms: None,
            };
            layer::drag(browsers, args, ctx).await.map(drop)
        }
        ActionKind::Upload => {
            let paths = match (&a.values, &a.text) {
                (Some(many), _) if !many.is_empty() => many.clone(),
                (_, Some(one)) => vec![one.clone()],
                _ => return Err(missing("text")),
            };
            // No field named: the page's file input (one, or the locator
            // says there are several).
            let args = UploadArgs {
                address: upload_address(a, nodes),
                paths,
                timeout_ms: None,
            };
            layer::upload_file(browsers, args, ctx).await.map(drop)
        }
        _ => Err(ToolError::internal(format!(
            "{} is not an action on an element",
            action.action
        ))),
    }
}

/// The actions on the page or the session: navigate, search, scroll, keys,
/// wait, history, dialogs, tabs.
async fn on_page(browsers: &Browsers, action: &Action, ctx: &ToolContext) -> Result<(), ToolError> {
    let a = &action.args;
    let missing = |field: &str| missing(action, field);
    match action.action {
        ActionKind::Navigate => {
            let url = a.url.clone().ok_or_else(|| missing("url"))?;
            let args = NavigateArgs {
                url,
                wait_until: Default::default(),
                timeout_ms: None,
            };
            layer::navigate(browsers, args, ctx).await.map(drop)
        }
        ActionKind::Search => {
            let query = a.text.clone().ok_or_else(|| missing("text"))?;
            let args = SearchArgs {
                query,
                address: Address::default(),
                timeout_ms: None,
            };
            layer::search(browsers, args, ctx).await.map(drop)
        }
        ActionKind::Scroll => layer::scroll(browsers, scroll_args(a), ctx).await.map(drop),
        ActionKind::PressKey => {
            let key = a.key.clone().ok_or_else(|| missing("key"))?;
            let args = PressKeyArgs {
                key,
                address: Address::default(),
                timeout_ms: None,
            };
            layer::press_key(browsers, args, ctx).await.map(drop)
        }
        ActionKind::Wait => {
            let seconds = a.seconds.ok_or_else(|| missing("seconds"))?;
            layer::wait(
                browsers,
                WaitArgs {
                    seconds: Some(seconds),
                    text: None,
                    text_gone: None,
                },
                ctx,
            )
            .await
            .map(drop)
        }
        ActionKind::GoBack | ActionKind::GoForward => {
            let args = HistoryArgs { timeout_ms: None };
            match action.action {
                ActionKind::GoBack => layer::back(browsers, args, ctx).await,
                _ => layer::forward(browsers, args, ctx).await,
            }
            .map(drop)
        }
        ActionKind::HandleDialog => {
            let accept = a.accept.ok_or_else(|| missing("accept"))?;
            layer::answer_dialog(browsers, ctx, accept, a.text.clone()).await
        }
        ActionKind::SelectTab => {
            let index = a.index.ok_or_else(|| missing("index"))?;
            layer::select_tab(browsers, ctx, index).await
        }
        ActionKind::CloseTab => layer::close_tab(browsers, ctx, a.index).await,
        _ => Err(ToolError::internal(format!(
            "{} is not an action on the page",
            action.action
        ))),
    }
}

/// How long an action may settle (its own timeout), or `None` for actions
/// that start no work in the page by themselves (navigation already waits for
/// the load; scroll and wait change nothing to wait for).
pub(super) fn settles(kind: ActionKind, browsers: &Browsers) -> Option<std::time::Duration> {
    let t = &browsers.config().timeouts;
    let ms = match kind {
        ActionKind::Click => t.click_ms,
        ActionKind::Type | ActionKind::Select => t.type_ms,
        ActionKind::PressKey => t.press_key_ms,
        ActionKind::Search => t.search_ms,
        ActionKind::Hover | ActionKind::Drag => t.click_ms,
        ActionKind::Upload => t.type_ms,
        // Navigation and history wait for the load themselves; a held
        // dialog's page answers nothing to watch until it is answered; the
        // rest change nothing in the page.
        ActionKind::Navigate
        | ActionKind::Scroll
        | ActionKind::Wait
        | ActionKind::GoBack
        | ActionKind::GoForward
        | ActionKind::HandleDialog
        | ActionKind::SelectTab
        | ActionKind::CloseTab => return None,
    };
    Some(std::time::Duration::from_millis(ms))
}

/// The element an action names: its ref; else the snapshot's ref for the role
/// and name given; else the role and name themselves.
pub(super) fn address(a: &ActionArgs, nodes: &[SnapshotNode]) -> Address {
    let by_ref = |r: &String| Address {
        reference: Some(r.clone()),
        ..Address::default()
    };
    if let Some(r) = &a.reference {
        return by_ref(r);
    }
    if let (Some(role), Some(name)) = (&a.role, &a.name)
        && let Some(node) = nodes
            .iter()
            .find(|n| &n.role == role && n.name.eq_ignore_ascii_case(name))
        && let Some(r) = &node.reference
    {
        return by_ref(r);
    }
    // No role: an element named by the text it shows (a hover menu's label):
    // the innermost element holding that text.
    if a.role.is_none()
        && let Some(text) = &a.name
    {
        return Address {
            has_text: Some(text.clone()),
            exact: false,
            ..Address::default()
        };
    }
    Address {
        role: a.role.clone(),
        name: a.name.clone(),
        ..Address::default()
    }
}

/// An upload's file input: its ref; else the field its label names; else
/// the page's file input (one, or the locator says there are several).
pub(super) fn upload_address(a: &ActionArgs, nodes: &[SnapshotNode]) -> Address {
    match (&a.reference, &a.role, &a.name) {
        (Some(_), _, _) | (None, Some(_), _) => address(a, nodes),
        (None, None, Some(label)) => Address {
            label: Some(label.clone()),
            ..Address::default()
        },
        (None, None, None) => Address {
            selector: Some("input[type=file]".into()),
            ..Address::default()
        },
    }
}

/// A drag's `onto`: a ref of the snapshot, else the text of the element to
/// drop onto.
pub(super) fn onto_address(onto: String, nodes: &[SnapshotNode]) -> Address {
    match nodes.iter().any(|n| n.reference.as_ref() == Some(&onto)) {
        true => Address {
            reference: Some(onto),
            ..Address::default()
        },
        false => Address {
            has_text: Some(onto),
            ..Address::default()
        },
    }
}

/// `to` top/bottom wins over a direction; down unless told up.
pub(super) fn scroll_args(a: &ActionArgs) -> ScrollArgs {
    let to = match a.to.as_deref() {
        Some("top") => Some(Edge::Top),
        Some("bottom") => Some(Edge::Bottom),
        _ => None,
    };
    let direction = match (to, a.direction.as_deref()) {
        (Some(_), _) => None,
        (None, Some("up")) => Some(Direction::Up),
        _ => Some(Direction::Down),
    };
    ScrollArgs {
        direction,
        pixels: None,
        to,
        address: Address::default(),
        timeout_ms: None,
    }
}
