//! The front door: who is calling and what it may reach, decided once where a
//! request comes in, before a call enters the executor. Every entry point
//! makes one [`Caller`]: `axon mcp` over stdio the process's owner with
//! `[mcp]`'s [`ToolFilter`], `axon serve` one per bearer token or signed-in
//! principal (its `access.rs` authenticates; this is what it decides), and
//! the MCP service and the HTTP handlers only ask it: [`Caller::serves`] a
//! tool in `tools/list`, [`Caller::allows`] a call, [`Caller::owner`] whose
//! the call's history, files, sessions and approvals are.

use serde::{Deserialize, Serialize};
use smol_str::SmolStr;

use crate::Owner;

/// Who is calling, decided at the door. No default: a caller is made on
/// purpose ([`Caller::process`], or whole by the server's `access.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The tools it is shown and may call.
    pub tools: ToolFilter,
    /// Whose its calls are.
    pub whose: Whose,
    /// Whether it may act for everyone (reset breakers, cancel any run,
    /// accept a tool's definition, decide an approval).
    pub admin: bool,
}

/// Whose a caller's calls are ([`Caller::owner`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Whose {
    /// The process's owner (stdio; an admin token; a server without
    /// tokens' HTTP API): sees everything.
    #[default]
    Process,
    /// A tenant (a scoped token, a signed-in principal): keeps what it
    /// leaves to itself.
    Tenant(SmolStr),
    /// Each MCP session a tenant of its own (`/mcp` without tokens: every
    /// client on this machine, kept apart).
    EachSession,
}

impl Caller {
    /// The process's owner, shown the tools of `tools`.
    pub fn process(tools: ToolFilter) -> Caller {
        Caller {
            tools,
            whose: Whose::Process,
            admin: true,
        }
    }

    /// Whether `tool` is listed and served to this caller over MCP.
    pub fn serves(&self, tool: &str) -> bool {
        self.tools.serves(tool)
    }

    /// Whether this caller may call `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        self.tools.allows(tool)
    }

    /// Who a call this caller makes in `session` (its correlation id) is
    /// made as (`ToolCall::owner`).
    pub fn owner(&self, session: &str) -> Owner {
        match &self.whose {
            Whose::Process => Owner::Process,
            Whose::Tenant(name) => Owner::Tenant(name.clone()),
            Whose::EachSession => Owner::Tenant(SmolStr::from(session)),
        }
    }
}

/// Which tools an MCP client is shown (`[mcp] tools` / `exclude` in `axon.toml`):
/// every listed schema costs the agent tokens, so a deployment lists only what
/// its agents use. Patterns are globs where `*` matches any run of characters.
/// A tool left out is not callable over MCP either.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolFilter {
    /// Tools listed (empty: all), such as `["browser_*", "http_request"]`.
    pub tools: Vec<String>,
    /// Tools never listed, even when `tools` matches them.
    pub exclude: Vec<String>,
    /// A further limit (empty: none): a tool must also match one of these, such
    /// as the tools a scoped bearer token may call.
    pub within: Vec<String>,
    /// The optional capabilities served besides the core tools
    /// ([`CAPABILITIES`]), such as `["pdf"]`.
    pub caps: Vec<String>,
}

/// Tools an MCP client is shown only when their capability is asked for
/// (`[mcp] caps`, `axon mcp --caps`), as Playwright MCP's `--caps` does: rare
/// tools stay out of the listing every agent pays for on every turn. The
/// HTTP API and plans can call them whatever the capabilities.
pub const CAPABILITIES: &[(&str, &[&str])] = &[
    ("pdf", &["browser_pdf_save"]),
    (
        "testing",
        &["browser_verify_text_visible", "browser_verify_value"],
    ),
    ("storage", &["browser_cookies", "browser_storage"]),
    (
        "vision",
        &[
            "browser_mouse_click_xy",
            "browser_mouse_move_xy",
            "browser_mouse_drag_xy",
            "browser_mouse_wheel",
        ],
    ),
    ("emulation", &["browser_emulate"]),
    ("network", &["browser_route", "browser_unroute"]),
    ("recording", &["browser_recording"]),
];

impl ToolFilter {
    /// Whether `name` is listed and served over MCP: allowed, and in the
    /// core tools or a capability asked for.
    pub fn serves(&self, name: &str) -> bool {
        let gated = CAPABILITIES
            .iter()
            .find(|(_, tools)| tools.contains(&name))
            .is_some_and(|(cap, _)| !self.caps.iter().any(|c| c == cap));
        !gated && self.allows(name)
    }

    /// Whether `name` is allowed by the patterns (what a scoped token may
    /// call over HTTP too); capabilities aside.
    pub fn allows(&self, name: &str) -> bool {
        (self.tools.is_empty() || self.tools.iter().any(|p| crate::glob::matches(p, name)))
            && (self.within.is_empty() || self.within.iter().any(|p| crate::glob::matches(p, name)))
            && !self.exclude.iter().any(|p| crate::glob::matches(p, name))
    }
}
