//! One `[[mcp.servers]]` entry (where a server is, what its tools are
//! called, the policy they share) and what can be wrong with it.

use std::collections::BTreeMap;

use axon_core::registry::is_valid_tool_name;
use serde::{Deserialize, Serialize};

use crate::pin::PinMode;

/// How long a server may take to start and answer `initialize` and `tools/list`
/// unless its config says otherwise.
pub const DEFAULT_STARTUP_TIMEOUT_MS: u64 = 30_000;

/// One `[[mcp.servers]]` entry: where the server is and what to call its tools.
///
/// Either `command` (with `args`, `env`, `cwd`) for a server that speaks MCP on
/// its stdin/stdout, or `url` (with `headers`) for Streamable HTTP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// Names the server in errors and, unless `prefix` is set, its tools:
    /// `<name>__<tool>`.
    pub name: String,
    /// The program to start (stdio transport).
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables added to Axon's own for the child (tokens go here;
    /// `axon config show` masks them).
    pub env: BTreeMap<String, String>,
    /// The child's working directory.
    pub cwd: Option<std::path::PathBuf>,
    /// The endpoint (Streamable HTTP transport).
    pub url: Option<String>,
    /// HTTP headers sent with every request (`Authorization` for a token).
    pub headers: BTreeMap<String, String>,
    /// Tool names become `<prefix>__<tool>` instead of `<name>__<tool>`.
    pub prefix: Option<String>,
    /// A server that fails to start is a warning and its tools are absent,
    /// instead of a start-up error.
    pub optional: bool,
    /// How long starting, the handshake and listing the tools may take.
    pub startup_timeout_ms: u64,
    /// What happens when a tool's definition is not the accepted one
    /// (crate::pin): `hold` (the default), `warn` or `off`.
    pub pin: PinMode,
    /// Policy keys for every tool of the server, over `[defaults]` and under
    /// each tool's `[tools.<name>]` (docs/design.md, "Policy layers"): the
    /// breaker, rate limit and retry budget they share (key `server`).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub policy: serde_json::Map<String, serde_json::Value>,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            name: String::new(),
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            prefix: None,
            optional: false,
            startup_timeout_ms: DEFAULT_STARTUP_TIMEOUT_MS,
            pin: PinMode::default(),
            policy: serde_json::Map::new(),
        }
    }
}

impl McpServerConfig {
    /// A stdio server: `command args…`.
    pub fn stdio(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        McpServerConfig {
            name: name.into(),
            command: Some(command.into()),
            args: args.into_iter().map(Into::into).collect(),
            ..McpServerConfig::default()
        }
    }

    /// A Streamable HTTP server at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServerConfig {
            name: name.into(),
            url: Some(url.into()),
            ..McpServerConfig::default()
        }
    }

    /// Check the entry before anything is started; the error names the field.
    pub fn check(&self) -> Result<(), McpConfigError> {
        let server = self.name.clone();
        if self.name.is_empty() {
            return Err(McpConfigError::NoName);
        }
        let prefix = self.tool_prefix();
        if !is_valid_tool_name(prefix) || prefix.len() > 40 {
            return Err(McpConfigError::BadPrefix {
                server,
                field: if self.prefix.is_some() {
                    "prefix"
                } else {
                    "name"
                },
                prefix: prefix.to_string(),
            });
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Err(McpConfigError::CommandAndUrl { server }),
            (None, None) => Err(McpConfigError::NoTransport { server }),
            (Some(command), None) if command.trim().is_empty() => {
                Err(McpConfigError::EmptyCommand { server })
            }
            (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                Err(McpConfigError::BadUrl { server })
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn tool_prefix(&self) -> &str {
        self.prefix.as_deref().unwrap_or(&self.name)
    }

    /// Whether `tool` is one of this server's imported tools by its name
    /// (`<prefix>__<tool>`), so a caller can start only the servers it needs.
    pub fn provides(&self, tool: &str) -> bool {
        tool.strip_prefix(self.tool_prefix())
            .is_some_and(|rest| rest.starts_with("__"))
    }
}

/// What is wrong with an `[[mcp.servers]]` entry; each names the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum McpConfigError {
    /// The entry has no `name`.
    #[error("mcp.servers: an entry has no name")]
    NoName,
    /// The name or prefix cannot start a tool name.
    #[error(
        "mcp.servers {server:?}: {field} {prefix:?} must be 1-40 characters of a-z, A-Z, 0-9, _ and -, since it starts every tool name"
    )]
    BadPrefix {
        /// The server's name.
        server: String,
        /// `name` or `prefix`.
        field: &'static str,
        /// The value.
        prefix: String,
    },
    /// Both transports given.
    #[error("mcp.servers {server:?}: give either command or url, not both")]
    CommandAndUrl {
        /// The server's name.
        server: String,
    },
    /// Neither transport given.
    #[error("mcp.servers {server:?}: needs command (stdio) or url (Streamable HTTP)")]
    NoTransport {
        /// The server's name.
        server: String,
    },
    /// `command` is blank.
    #[error("mcp.servers {server:?}: command is empty")]
    EmptyCommand {
        /// The server's name.
        server: String,
    },
    /// `url` is not http(s).
    #[error("mcp.servers {server:?}: url must start with http:// or https://")]
    BadUrl {
        /// The server's name.
        server: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_check_names_the_problem() {
        let both = McpServerConfig {
            url: Some("http://x".into()),
            ..McpServerConfig::stdio("a", "node", ["x"])
        };
        let err = both.check().unwrap_err();
        assert_eq!(err, McpConfigError::CommandAndUrl { server: "a".into() });
        assert!(err.to_string().contains("not both"));
        let neither = McpServerConfig {
            name: "a".into(),
            ..McpServerConfig::default()
        };
        assert!(
            neither
                .check()
                .unwrap_err()
                .to_string()
                .contains("needs command")
        );
        let bad = McpServerConfig::stdio("a b", "node", ["x"]);
        assert!(
            bad.check()
                .unwrap_err()
                .to_string()
                .contains("name \"a b\"")
        );
        assert!(McpServerConfig::http("gh", "ftp://x").check().is_err());
        assert!(McpServerConfig::http("gh", "https://x/mcp").check().is_ok());
    }
}
