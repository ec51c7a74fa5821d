//! Who may call what. Each bearer token carries an [`Access`]: the tools it may
//! see and call (globs, as `[mcp] tools`), and whether it is an admin. Tokens of
//! `server.auth_tokens` may do everything; `[[server.tokens]]` entries are
//! scoped. A token sees only its tools in `GET /v1/tools` and MCP's
//! `tools/list`, calls only them (directly, in `/v1/calls`, and as a plan's steps
//! and fallbacks), and only an admin token resets breakers or cancels runs.
//! A token signed by a trusted identity provider (`idp/`) is a
//! [`Principal`]: its tenant and tools come from its claims, and a refusal
//! names the scope that would have let it through.

use std::sync::Arc;

use axon_core::{Caller, Owner, ToolFilter, Whose};
use axon_plan::Plan;
use axum::http::StatusCode;

use crate::idp::{Idp, Principal, metadata};
use crate::problem::Problem;

/// A bearer token limited to some tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopedToken {
    /// The token's value (from the environment; never from a config file).
    pub token: String,
    /// Tools it may see and call, as globs (`browser_*`); empty: every tool.
    pub tools: Vec<String>,
    /// Whether it may reset breakers and cancel runs.
    pub admin: bool,
    /// The `[secrets]` its plans may use (`*`: all); none when empty. An
    /// admin token is the process's owner and may use every one.
    pub secrets: Vec<String>,
}

/// What the caller of one request may do (a request extension set by the auth
/// layer).
#[derive(Clone, Debug)]
pub(crate) struct Access {
    /// What the door decided (`axon_core::caller`): the tools this token may
    /// see and call, whose its calls are, whether it is an admin.
    caller: Caller,
    /// Which MCP service serves this caller (each scope has its own listing).
    pub(crate) mcp: McpScopeKey,
    /// A signed-in caller's issuer, to name the scope it lacks.
    signed_in: Option<(Arc<Idp>, usize)>,
}

/// Which `/mcp` service answers a caller: one built for each static token
/// (0: full access), one made on first use for each signed-in principal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum McpScopeKey {
    Fixed(usize),
    Principal(Arc<str>),
}

/// The scope's part of a stored key (idempotency): a static token's index,
/// as before principals existed, or the principal's key.
impl std::fmt::Display for McpScopeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpScopeKey::Fixed(i) => write!(f, "{i}"),
            McpScopeKey::Principal(key) => f.write_str(key),
        }
    }
}

impl Access {
    /// Everything (no auth configured, or an unscoped token).
    pub(crate) fn all() -> Self {
        Access {
            caller: Caller::process(ToolFilter::default()),
            mcp: McpScopeKey::Fixed(0),
            signed_in: None,
        }
    }

    /// A `[[server.tokens]]` token: a tenant `token-<n>` unless an admin.
    pub(crate) fn scoped(token: &ScopedToken, mcp: usize) -> Self {
        Access {
            caller: Caller {
                tools: ToolFilter {
                    tools: token.tools.clone(),
                    ..ToolFilter::default()
                },
                whose: match token.admin {
                    true => Whose::Process,
                    false => Whose::Tenant(axon_core::SmolStr::from(format!("token-{mcp}"))),
                },
                admin: token.admin,
            },
            mcp: McpScopeKey::Fixed(mcp),
            signed_in: None,
        }
    }

    /// A verified token of an identity provider: its tenant, unless its
    /// grants make it an admin.
    pub(crate) fn signed_in(principal: &Principal, idp: Arc<Idp>) -> Self {
        let key = format!(
            "idp\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
            principal.issuer,
            principal.tenant,
            principal.admin,
            principal.tools.join("\u{1e}")
        );
        Access {
            caller: Caller {
                tools: ToolFilter {
                    tools: principal.tools.clone(),
                    ..ToolFilter::default()
                },
                whose: match principal.admin {
                    true => Whose::Process,
                    false => Whose::Tenant(axon_core::SmolStr::from(principal.tenant.as_str())),
                },
                admin: principal.admin,
            },
            mcp: McpScopeKey::Principal(Arc::from(key)),
            signed_in: Some((idp, principal.issuer)),
        }
    }

    /// The caller this token's MCP service serves: shown the server's
    /// `[mcp]` filter narrowed to the token's tools; its calls made as its
    /// tenant, or, where no token keeps clients apart (`open`), each MCP
    /// session as a tenant of its own.
    pub(crate) fn mcp_caller(&self, mcp: &ToolFilter, open: bool) -> Caller {
        Caller {
            tools: ToolFilter {
                within: self.caller.tools.tools.clone(),
                ..mcp.clone()
            },
            whose: match &self.caller.whose {
                Whose::Process if open => Whose::EachSession,
                whose => whose.clone(),
            },
            admin: self.caller.admin,
        }
    }

    /// Who this caller's calls are made as (`ToolCall::owner`): a scoped
    /// token or a signed-in principal that is not an admin is a tenant,
    /// which keeps what it leaves to itself; an admin (and every caller
    /// without tokens) is the process's owner, who sees all.
    pub(crate) fn owner(&self) -> Owner {
        self.caller.owner("")
    }

    /// Whether this caller reads what `owner` keeps (a history entry, a
    /// run, an approval): an admin reads everything, a tenant only its own.
    pub(crate) fn reads(&self, owner: &Owner) -> bool {
        self.owner().sees(owner)
    }

    /// Whether this caller may see and call `tool`.
    pub(crate) fn allows(&self, tool: &str) -> bool {
        self.caller.allows(tool)
    }

    /// 403 unless this caller may call `tool`.
    pub(crate) fn check_tool(&self, tool: &str, pointer: &str) -> Result<(), Problem> {
        if self.allows(tool) {
            return Ok(());
        }
        let refused = forbidden(format!("this token may not call the tool {tool:?}")).at(pointer);
        Err(self.naming_scope(refused, Some(tool)))
    }

    /// For a signed-in caller: the scopes that would have let it through,
    /// in the body and the `WWW-Authenticate` challenge (RFC 6750 §3.1).
    fn naming_scope(&self, refused: Problem, tool: Option<&str>) -> Problem {
        let Some((idp, issuer)) = &self.signed_in else {
            return refused;
        };
        let scopes = idp.scopes_for(*issuer, tool);
        let url = metadata::metadata_url(&idp.resource, "/");
        let challenge = metadata::challenge(&url, Some("insufficient_scope"), None, &scopes);
        refused
            .with("required_scopes", serde_json::json!(scopes))
            .with_challenge(challenge)
    }

    /// 403 unless this caller may call every tool of `plan` (steps and fallbacks).
    pub(crate) fn check_plan(&self, plan: &Plan) -> Result<(), Problem> {
        for (i, step) in plan.steps.iter().enumerate() {
            self.check_tool(&step.tool, &format!("/steps/{i}/tool"))?;
            for (k, fallback) in step.fallbacks.iter().enumerate() {
                self.check_tool(&fallback.tool, &format!("/steps/{i}/fallbacks/{k}/tool"))?;
            }
        }
        Ok(())
    }

    /// `secrets` with each scoped token's grants (`ScopedToken::secrets`),
    /// every other tenant kept from all of them.
    pub(crate) fn grant_secrets(
        secrets: &axon_plan::Secrets,
        tokens: &[ScopedToken],
    ) -> axon_plan::Secrets {
        let mut secrets = secrets.clone().closed_to_tenants();
        for (i, token) in tokens.iter().enumerate() {
            if let Some(tenant) = Access::scoped(token, i + 1).owner().tenant() {
                secrets = secrets.granting(tenant.to_string(), token.secrets.iter().cloned());
            }
        }
        secrets
    }

    /// 403 unless this caller is an admin.
    pub(crate) fn check_admin(&self, what: &str) -> Result<(), Problem> {
        if self.caller.admin {
            return Ok(());
        }
        Err(self.naming_scope(forbidden(format!("{what} needs an admin token")), None))
    }
}

fn forbidden(detail: String) -> Problem {
    Problem::new(StatusCode::FORBIDDEN, "forbidden", detail)
}
