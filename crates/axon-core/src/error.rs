//! The error vocabulary. One [`ErrorKind`] decides everything that happens after a
//! failure — retried or not, counted by the breaker or not, which metric label and
//! which HTTP status — so tools never make those decisions themselves: they return a
//! kind and a message, and the pipeline does the rest.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What went wrong, in the words of docs/design.md's "Error kinds" table: this enum's
/// methods are that table written as code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Arguments failed schema validation; the message names the JSON pointer.
    InvalidArguments,
    /// The tool is not in the registry.
    UnknownTool,
    /// An attempt exceeded its hard timeout.
    Timeout,
    /// The tool reported a passing problem (network blip, 5xx, stale element).
    Transient,
    /// Upstream asked us to slow down (HTTP 429 or equivalent).
    RateLimited,
    /// Upstream unreachable (connection refused, MCP server down).
    Unavailable,
    /// The tool ran and reported a domain failure: the dependency is healthy,
    /// the request was not.
    Failed,
    /// The result failed validation (output schema, or data that says `success: false` with
    /// no error).
    InvalidOutput,
    /// The circuit breaker is open; nothing was attempted.
    CircuitOpen,
    /// The caller cancelled the call.
    Cancelled,
    /// The deadline or the retry budget was spent.
    BudgetExhausted,
    /// A bug: a panic inside a tool, caught and reported.
    Internal,
    /// An imported tool is held: its definition (description, schemas,
    /// annotations) is not one a person accepted — it changed since it was
    /// pinned, or its first definition was flagged (axon-mcp-client's `pin`).
    ToolChanged,
    /// A person (or the approval store being unusable) denied a call that
    /// waited for approval; nothing was attempted.
    ApprovalDenied,
    /// Nobody decided on a call that waited for approval before its
    /// `approval_timeout_ms`; nothing was attempted.
    ApprovalTimeout,
}

impl ErrorKind {
    /// Every kind, in the order of docs/design.md's table (handy for docs, metrics and tests).
    pub const ALL: [ErrorKind; 15] = [
        ErrorKind::InvalidArguments,
        ErrorKind::UnknownTool,
        ErrorKind::Timeout,
        ErrorKind::Transient,
        ErrorKind::RateLimited,
        ErrorKind::Unavailable,
        ErrorKind::Failed,
        ErrorKind::InvalidOutput,
        ErrorKind::CircuitOpen,
        ErrorKind::Cancelled,
        ErrorKind::BudgetExhausted,
        ErrorKind::Internal,
        ErrorKind::ToolChanged,
        ErrorKind::ApprovalDenied,
        ErrorKind::ApprovalTimeout,
    ];

    /// The snake_case name used in JSON, metrics and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Transient => "transient",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Failed => "failed",
            ErrorKind::InvalidOutput => "invalid_output",
            ErrorKind::CircuitOpen => "circuit_open",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::BudgetExhausted => "budget_exhausted",
            ErrorKind::Internal => "internal",
            ErrorKind::ToolChanged => "tool_changed",
            ErrorKind::ApprovalDenied => "approval_denied",
            ErrorKind::ApprovalTimeout => "approval_timeout",
        }
    }

    /// Whether the retry loop may try again after this kind.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout
                | ErrorKind::Transient
                | ErrorKind::RateLimited
                | ErrorKind::Unavailable
        )
    }

    /// Whether this kind is a failure of the dependency, counted by its breaker.
    pub fn counts_for_breaker(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout
                | ErrorKind::Transient
                | ErrorKind::Unavailable
                | ErrorKind::InvalidOutput
                | ErrorKind::Internal
        )
    }

    /// Whether the failed attempt may already have had side effects upstream, so
    /// that retrying a non-idempotent tool could do the thing twice.
    pub fn may_have_side_effects(self) -> bool {
        matches!(self, ErrorKind::Timeout | ErrorKind::Transient)
    }

    /// The `reason` label of `tool_errors_total` (`exception` for a
    /// tool that blew up; every other kind is its own name).
    pub fn metric_reason(self) -> &'static str {
        match self {
            ErrorKind::Internal => "exception",
            other => other.as_str(),
        }
    }

    /// The `outcome` label of `tool_latency_ms` (a closed set: success, cache_hit, timeout,
    /// error, circuit_open, cancelled).
    pub fn metric_outcome(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::CircuitOpen => "circuit_open",
            ErrorKind::Cancelled => "cancelled",
            _ => "error",
        }
    }

    /// The HTTP status a server front end answers with for a call that failed so.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::InvalidArguments => 400,
            ErrorKind::UnknownTool => 404,
            ErrorKind::Timeout => 504,
            ErrorKind::Transient => 502,
            ErrorKind::RateLimited => 429,
            ErrorKind::Unavailable | ErrorKind::CircuitOpen => 503,
            ErrorKind::Failed | ErrorKind::InvalidOutput => 422,
            ErrorKind::Cancelled => 499,
            ErrorKind::BudgetExhausted => 504,
            ErrorKind::Internal => 500,
            ErrorKind::ToolChanged => 409,
            ErrorKind::ApprovalDenied => 403,
            ErrorKind::ApprovalTimeout => 408,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a tool returns when it fails. A kind, a message for humans, an optional
/// domain `code` (`element_not_found`, `http_404`) and, for `rate_limited`, how long
/// upstream asked us to wait.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ToolError {
    /// Drives the pipeline's decisions.
    pub kind: ErrorKind,
    /// Domain detail, carried through to the call result unchanged.
    pub code: Option<String>,
    /// Human-readable; never contains secrets from the arguments.
    pub message: String,
    /// Upstream's `Retry-After`, honoured by the retry loop.
    pub retry_after: Option<Duration>,
    /// The tool failed before doing anything (a button never became
    /// clickable): retrying cannot repeat a side effect, so the retry loop
    /// retries even a tool that is not idempotent.
    pub before_acting: bool,
    /// The JSON pointer of the bad value, when one is known: into the arguments
    /// (or the result, for `invalid_output`; into the policy when `code` is
    /// `invalid_policy`). A front end points at the field from this, never by
    /// reading the message.
    pub pointer: Option<String>,
    /// What the caller may choose from when the tool would not choose for
    /// it: the elements it could have meant ([`ToolError::candidates`]) and
    /// the actions a step of several holds ([`ToolError::steps`]). Boxed and
    /// absent for most errors: every call's future holds `ToolError`s, and
    /// their size is a cost on every call (`a_calls_future_stays_small`).
    pub choices: Option<Box<Choices>>,
}

/// What a refusal offers the caller (see [`ToolError::choices`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Choices {
    /// The elements the tool could have meant (a step that fits two
    /// buttons, a name nothing on the page matches well): ranked, so that
    /// the caller's next call picks one by its ref instead of reading the
    /// page again.
    pub candidates: Vec<Candidate>,
    /// The actions a step of several holds, in order, when a tool that does
    /// one action a call refused it ("Select Double and click Book" to
    /// `browser_act`): the caller gives them one at a time, with no need to
    /// split the sentence itself.
    pub steps: Vec<String>,
}

/// An element a tool could have meant (see [`ToolError::candidates`]): its
/// address and what a person reading the page would tell it apart by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Candidate {
    /// The address the element tools take (`{"ref": "e42"}`).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Its role (`button`, `link`, `textbox`, …).
    pub role: String,
    /// Its accessible name (page content: cut at [`MAX_CANDIDATE_TEXT`]).
    pub name: String,
    /// Where it is: the row, item, form or section around it and the text
    /// next to it (`in listitem "Result 6"`), when the page says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// At most this many candidates reach a call result: enough to choose
/// from, never a page's worth.
pub const MAX_CANDIDATES: usize = 8;

/// A candidate's name or context is cut at this many bytes.
pub const MAX_CANDIDATE_TEXT: usize = 200;

/// The most steps [`CallError::steps`] lists: a refusal of more lists none
/// (a list cut short would be done half), and its message says so.
pub const MAX_STEPS: usize = 16;

/// The longest step of [`CallError::steps`]: the caller's own words, cut
/// only when absurd (a step cut short is a different step).
pub const MAX_STEP_TEXT: usize = 1024;

impl Candidate {
    /// The candidate as an agent reads it: `button "Search" [ref=e12] (in form "search")`.
    pub fn line(&self) -> String {
        let mut s = format!("{} {:?}", self.role, self.name);
        if let Some(r) = &self.reference {
            s.push_str(&format!(" [ref={r}]"));
        }
        if let Some(c) = &self.context {
            s.push_str(&format!(" ({c})"));
        }
        s
    }

    fn bounded(self) -> Self {
        Candidate {
            reference: self.reference.map(|r| bounded(r, 64)),
            role: bounded(self.role, 64),
            name: bounded(self.name, MAX_CANDIDATE_TEXT),
            context: self.context.map(|c| bounded(c, MAX_CANDIDATE_TEXT)),
        }
    }
}

impl ToolError {
    /// An error of any kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            code: None,
            message: message.into(),
            retry_after: None,
            before_acting: false,
            pointer: None,
            choices: None,
        }
    }

    /// A passing problem worth retrying.
    pub fn transient(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Transient, message)
    }

    /// A domain failure: the tool works, the request does not.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Failed, message)
    }

    /// Upstream cannot be reached.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unavailable, message)
    }

    /// Bad arguments; name the field in the message.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArguments, message)
    }

    /// Upstream said 429; `retry_after` is its `Retry-After`, when it gave one.
    pub fn rate_limited(message: impl Into<String>, retry_after: Option<Duration>) -> Self {
        ToolError {
            retry_after,
            ..Self::new(ErrorKind::RateLimited, message)
        }
    }

    /// The caller cancelled the call (its cancellation token fired).
    pub fn cancelled() -> Self {
        Self::new(ErrorKind::Cancelled, "cancelled by the caller")
    }

    /// A bug; the pipeline uses it for caught panics.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// Attach a domain code.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Name the bad value's JSON pointer (see [`ToolError::pointer`]).
    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// Name the elements the tool could have meant, best first; more than
    /// [`MAX_CANDIDATES`] are cut when the error becomes a call result.
    pub fn with_candidates(mut self, candidates: Vec<Candidate>) -> Self {
        if !candidates.is_empty() || self.choices.is_some() {
            self.choices_mut().candidates = candidates;
        }
        self
    }

    /// Name the actions a refused step holds, in order; more than
    /// [`MAX_STEPS`] are dropped, all of them, when the error becomes a call
    /// result.
    pub fn with_steps(mut self, steps: Vec<String>) -> Self {
        if !steps.is_empty() || self.choices.is_some() {
            self.choices_mut().steps = steps;
        }
        self
    }

    /// The elements the tool could have meant, best first (empty for most
    /// errors).
    pub fn candidates(&self) -> &[Candidate] {
        self.choices.as_deref().map_or(&[], |c| &c.candidates)
    }

    /// The actions a refused step holds, in order (empty for most errors).
    pub fn steps(&self) -> &[String] {
        self.choices.as_deref().map_or(&[], |c| &c.steps)
    }

    fn choices_mut(&mut self) -> &mut Choices {
        self.choices.get_or_insert_with(Box::default)
    }

    /// Say that the tool failed before acting (see [`ToolError::before_acting`]).
    pub fn before_acting(mut self) -> Self {
        self.before_acting = true;
        self
    }

    /// `"<kind>: <message>"`, the form used in `retry_reasons`.
    pub fn reason(&self) -> String {
        format!("{}: {}", self.kind, self.message)
    }
}

/// The `error` object of a call result: `{"kind", "code", "message", "retryable"}`,
/// plus `retry_after_ms` and `pointer` when known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallError {
    /// The error kind.
    pub kind: ErrorKind,
    /// Domain detail, or null.
    pub code: Option<String>,
    /// Human-readable message.
    pub message: String,
    /// Whether calling again later could succeed.
    pub retryable: bool,
    /// Upstream's requested wait, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// The JSON pointer of the bad value (see [`ToolError::pointer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// The elements the tool could have meant, best first (see
    /// [`Choices::candidates`]); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    /// The actions a refused step of several holds, in order, to give one
    /// at a time (see [`ToolError::steps`]); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
}

/// The longest error message a call result (and so history, the API and
/// MCP) carries: a message that quotes what a caller sent (a 200 KB
/// template, a page's text) is cut here, on a character boundary.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// A message cut to [`MAX_MESSAGE_BYTES`]: for errors a call result carries
/// that are not made from a [`ToolError`] (a plan step that never ran).
pub fn bounded_message(message: String) -> String {
    bounded(message, MAX_MESSAGE_BYTES)
}

/// `text` cut to `max` bytes on a character boundary, saying how much went.
fn bounded(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let total = text.len();
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("… ({} more bytes cut)", total - end));
    text
}

impl From<ToolError> for CallError {
    fn from(e: ToolError) -> Self {
        let choices = e.choices.map(|c| *c).unwrap_or_default();
        CallError {
            retryable: e.kind.is_retryable() || e.kind == ErrorKind::CircuitOpen,
            kind: e.kind,
            code: e.code,
            message: bounded(e.message, MAX_MESSAGE_BYTES),
            retry_after_ms: e.retry_after.map(|d| d.as_millis() as u64),
            pointer: e.pointer.map(|p| bounded(p, 1024)),
            candidates: choices
                .candidates
                .into_iter()
                .take(MAX_CANDIDATES)
                .map(Candidate::bounded)
                .collect(),
            // All of them or none: a list cut short would be done half.
            steps: match choices.steps {
                steps if steps.len() <= MAX_STEPS => steps
                    .into_iter()
                    .map(|s| bounded(s, MAX_STEP_TEXT))
                    .collect(),
                _ => Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refused step's actions reach the result all, or none when too
    /// many: a list cut short would be done half and look whole.
    #[test]
    fn steps_reach_the_result_all_or_none() {
        let some = vec!["Select Double".to_string(), "click Book".to_string()];
        let e = CallError::from(ToolError::failed("two").with_steps(some.clone()));
        assert_eq!(e.steps, some);
        let many: Vec<String> = (0..=MAX_STEPS).map(|i| format!("Check {i}")).collect();
        let e = CallError::from(ToolError::failed("many").with_steps(many));
        assert!(e.steps.is_empty());
        let long = "x".repeat(MAX_STEP_TEXT + 10);
        let e = CallError::from(ToolError::failed("long").with_steps(vec![long]));
        assert!(e.steps[0].len() < MAX_STEP_TEXT + 40);
        // Nothing to offer allocates nothing.
        let plain = ToolError::failed("x")
            .with_candidates(Vec::new())
            .with_steps(Vec::new());
        assert!(plain.choices.is_none());
    }

    /// Issue 59: a message that quotes 200 KB of what a caller sent is cut
    /// before it reaches a result and history.
    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let long = format!("template {}: no such step", "é".repeat(100_000));
        let e = CallError::from(ToolError::invalid_arguments(long));
        assert!(
            e.message.len() < MAX_MESSAGE_BYTES + 40,
            "{}",
            e.message.len()
        );
        assert!(
            e.message.ends_with("more bytes cut)"),
            "{}",
            &e.message[4000..]
        );
        let short = CallError::from(ToolError::failed("short"));
        assert_eq!(short.message, "short");
    }

    #[test]
    fn kinds_serialise_as_their_snake_case_names() {
        for kind in ErrorKind::ALL {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::Value::String(kind.as_str().into()));
        }
    }

    #[test]
    fn table_of_design_md_holds() {
        use ErrorKind::*;
        let retried: Vec<_> = ErrorKind::ALL
            .into_iter()
            .filter(|k| k.is_retryable())
            .collect();
        assert_eq!(retried, [Timeout, Transient, RateLimited, Unavailable]);
        let counted: Vec<_> = ErrorKind::ALL
            .into_iter()
            .filter(|k| k.counts_for_breaker())
            .collect();
        assert_eq!(
            counted,
            [Timeout, Transient, Unavailable, InvalidOutput, Internal]
        );
    }
}

/// A name that is not one of those a setting takes (`"svg"` for a graph
/// format, `"fast"` for a durability): the parse error of every enum Axon reads
/// from text, so a caller can match on it and its message says what would do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} is not a {what}: {expected}")]
pub struct UnknownName {
    /// The text given.
    pub given: String,
    /// What it was meant to name ("graph format").
    pub what: &'static str,
    /// The names it takes, as a reader would list them ("dot, mermaid or json").
    pub expected: &'static str,
}
