//! What a tab's page logged and fetched since it last navigated: its
//! console messages and uncaught errors, and its network requests. An agent
//! debugging a web app reads both (`browser_console_messages`,
//! `browser_network_requests`).
//!
//! Every tab keeps a journal from the moment it opens (tabs.rs), fed by
//! Chromium's Runtime and Network events, bounded ([`MAX_ENTRIES`] of each,
//! the newest kept, each text cut at [`MAX_TEXT`]) and started afresh when
//! the tab's main frame loads a new document. Page content is hostile: a
//! message is text to read, never markup to follow, and request URLs are
//! kept with their passwords and secret-named query values masked.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axon_core::ToolError;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventRequestWillBeSent, EventResponseReceived,
};
use chromiumoxide::cdp::browser_protocol::page::EventFrameNavigated;
use chromiumoxide::cdp::js_protocol::runtime::{
    EventConsoleApiCalled, EventExceptionThrown, RemoteObject,
};
use chromiumoxide::page::Page;
use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

/// Entries of each kind kept per tab.
pub(crate) const MAX_ENTRIES: usize = 500;

/// Characters kept of one message or URL.
const MAX_TEXT: usize = 2_000;

/// How severe a console message is, least first.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
    Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `console.debug`.
    Debug,
    /// `console.log`, `console.info` and the rest.
    #[default]
    Info,
    /// `console.warn`.
    Warning,
    /// `console.error`, `console.assert` and uncaught exceptions.
    Error,
}

/// One console message.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Message {
    pub(crate) level: Level,
    pub(crate) text: String,
}

/// One network request.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) url: String,
    /// `document`, `fetch`, `xhr`, `script`, `stylesheet`, `image`, …
    #[serde(rename = "type")]
    pub(crate) kind: String,
    /// The response's status, once one came.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<i64>,
    /// Why it failed (`net::ERR_CONNECTION_REFUSED`), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<String>,
    #[serde(skip)]
    id: String,
    #[serde(skip)]
    loader: String,
}

#[derive(Default)]
struct Entries {
    messages: VecDeque<Message>,
    requests: VecDeque<Request>,
}

/// A tab's journal, kept until dropped (its tab closed).
pub(crate) struct Journal {
    task: tokio::task::AbortHandle,
    entries: Arc<Mutex<Entries>>,
    sync: Syncer,
}

/// Waits until the journal has heard what the page logged before the wait
/// began.
///
/// A click whose handler logs returns once Chromium answered it, but the
/// console events may reach the journal after that (under a busy CPU the
/// next call read the console before they did, and found it empty; a click
/// that logged 400 lines was read with part of them). So a read first logs a
/// marker of its own through the page's console: console events come in the
/// order they were logged, and once the journal hears the marker it has
/// heard everything before it. The marker is never kept, and carries a token
/// of this journal's so that a page cannot fake one. A page that replaces
/// `console.debug` only makes its reads wait [`SYNC_WAIT`].
#[derive(Clone)]
pub(crate) struct Syncer {
    token: Arc<str>,
    next: Arc<std::sync::atomic::AtomicU64>,
    heard: Arc<tokio::sync::watch::Sender<u64>>,
}

/// How long a read waits for the journal to catch up.
const SYNC_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// What every marker starts with.
const MARKER: &str = "\u{1}axon-journal-sync";

impl Syncer {
    /// Wait for the journal of `page` to catch up (at most [`SYNC_WAIT`]).
    pub(crate) async fn caught_up(&self, page: &Page) {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let mut heard = self.heard.subscribe();
        let marker = format!("{MARKER} {} {n}", self.token);
        let logged = crate::cdp::send(
            page,
            "Runtime.evaluate",
            serde_json::json!({"expression": format!("console.debug({})", Value::from(marker))}),
        )
        .await;
        if logged.is_ok() {
            let _ = tokio::time::timeout(SYNC_WAIT, heard.wait_for(|seen| *seen >= n)).await;
        }
    }

    /// The marker's number, when `text` is one of this journal's.
    fn marker(&self, text: &str) -> Option<u64> {
        let rest = text.strip_prefix(MARKER)?.strip_prefix(' ')?;
        let (token, n) = rest.split_once(' ')?;
        (token == &*self.token).then(|| n.parse().ok()).flatten()
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Journal {
    /// What waits for this journal to catch up.
    pub(crate) fn syncer(&self) -> Syncer {
        self.sync.clone()
    }

    /// The console messages at `level` or more severe, oldest first.
    pub(crate) fn messages(&self, level: Level) -> Vec<Message> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .messages
            .iter()
            .filter(|m| m.level >= level)
            .cloned()
            .collect()
    }

    /// The requests, failed ones (no response, or a status of 400 or more)
    /// first, each group in the order they were sent.
    pub(crate) fn requests(&self) -> Vec<Request> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let failed = |r: &&Request| r.failure.is_some() || r.status.is_some_and(|s| s >= 400);
        let mut out: Vec<Request> = entries.requests.iter().filter(failed).cloned().collect();
        out.extend(entries.requests.iter().filter(|r| !failed(r)).cloned());
        out
    }
}

/// What the journal hears.
enum Heard {
    Console(Box<EventConsoleApiCalled>),
    Thrown(Box<EventExceptionThrown>),
    Sent(Box<EventRequestWillBeSent>),
    Answered(Box<EventResponseReceived>),
    Failed(Box<EventLoadingFailed>),
    Navigated(Box<EventFrameNavigated>),
}

/// Start keeping `page`'s journal.
pub(crate) async fn keep(page: &Page) -> Result<Journal, ToolError> {
    let listen = |e: chromiumoxide::error::CdpError| {
        ToolError::transient(format!("listening for console and network events: {e}"))
    };
    macro_rules! heard {
        ($event:ty, $variant:ident) => {
            page.event_listener::<$event>()
                .await
                .map_err(listen)?
                .map(|e| Heard::$variant(Box::new((*e).clone())))
                .boxed()
        };
    }
    let streams = vec![
        heard!(EventConsoleApiCalled, Console),
        heard!(EventExceptionThrown, Thrown),
        heard!(EventRequestWillBeSent, Sent),
        heard!(EventResponseReceived, Answered),
        heard!(EventLoadingFailed, Failed),
        heard!(EventFrameNavigated, Navigated),
    ];
    let mut events = futures::stream::select_all(streams);
    let entries = Arc::new(Mutex::new(Entries::default()));
    let kept = entries.clone();
    let sync = Syncer {
        token: ulid::Ulid::new().to_string().into(),
        next: Arc::default(),
        heard: Arc::new(tokio::sync::watch::Sender::new(0)),
    };
    let syncer = sync.clone();
    let task = tokio::spawn(async move {
        while let Some(heard) = events.next().await {
            if let Heard::Console(e) = &heard
                && let [arg] = e.args.as_slice()
                && let Some(n) = arg
                    .value
                    .as_ref()
                    .and_then(Value::as_str)
                    .and_then(|t| syncer.marker(t))
            {
                syncer.heard.send_replace(n);
                continue;
            }
            kept.lock().unwrap_or_else(|e| e.into_inner()).hear(heard);
        }
    });
    Ok(Journal {
        task: task.abort_handle(),
        entries,
        sync,
    })
}

impl Entries {
    fn hear(&mut self, heard: Heard) {
        match heard {
            Heard::Console(e) => {
                let text = e.args.iter().map(text_of).collect::<Vec<_>>().join(" ");
                let kind = serde_json::to_value(&e.r#type).unwrap_or_default();
                let level = match kind.as_str().unwrap_or_default() {
                    "error" | "assert" => Level::Error,
                    "warning" => Level::Warning,
                    "debug" => Level::Debug,
                    _ => Level::Info,
                };
                self.message(level, text);
            }
            Heard::Thrown(e) => {
                let d = &e.exception_details;
                let text = d
                    .exception
                    .as_ref()
                    .and_then(|x| x.description.clone())
                    .unwrap_or_else(|| d.text.clone());
                self.message(Level::Error, text);
            }
            Heard::Sent(e) => {
                let kind = e
                    .r#type
                    .as_ref()
                    .and_then(|t| serde_json::to_value(t).ok())
                    .and_then(|v| v.as_str().map(str::to_lowercase))
                    .unwrap_or_else(|| "other".into());
                push(
                    &mut self.requests,
                    Request {
                        method: e.request.method.clone(),
                        url: masked(&e.request.url),
                        kind,
                        status: None,
                        failure: None,
                        id: e.request_id.inner().clone(),
                        loader: e.loader_id.inner().clone(),
                    },
                );
            }
            Heard::Answered(e) => {
                if let Some(r) = self.request(e.request_id.inner()) {
                    r.status = Some(e.response.status);
                }
            }
            Heard::Failed(e) => {
                if let Some(r) = self.request(e.request_id.inner()) {
                    r.failure = Some(cut(&e.error_text));
                }
            }
            Heard::Navigated(e) if e.frame.parent_id.is_none() => {
                // A new document in the main frame: what the old one logged
                // and fetched is history; its own document request stays.
                let loader = e.frame.loader_id.inner().clone();
                self.messages.clear();
                self.requests.retain(|r| r.loader == loader);
            }
            Heard::Navigated(_) => {}
        }
    }

    fn message(&mut self, level: Level, text: String) {
        push(
            &mut self.messages,
            Message {
                level,
                text: cut(&text),
            },
        );
    }

    fn request(&mut self, id: &str) -> Option<&mut Request> {
        self.requests.iter_mut().rev().find(|r| r.id == id)
    }
}

fn push<T>(list: &mut VecDeque<T>, item: T) {
    if list.len() >= MAX_ENTRIES {
        list.pop_front();
    }
    list.push_back(item);
}

fn cut(text: &str) -> String {
    text.chars().take(MAX_TEXT).collect()
}

pub(crate) fn masked(url: &str) -> String {
    cut(&axon_core::redact::mask_urls(url).unwrap_or_else(|| url.to_string()))
}

/// A console argument as text: a string as itself, another value as JSON,
/// an object by its description (`Error: boom`, `Array(3)`).
fn text_of(arg: &RemoteObject) -> String {
    match (&arg.value, &arg.description) {
        (Some(Value::String(s)), _) => s.clone(),
        (Some(v), _) => v.to_string(),
        (None, Some(d)) => d.clone(),
        (None, None) => serde_json::to_value(&arg.r#type)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
    }
}
