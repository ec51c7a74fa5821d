//! Checking a config before anything starts: each key that is wrong is
//! named (`server.tokens[1].env: …`), one section of the file at a time.

use super::*;

impl Config {
    /// Every check below, in the file's order of sections.
    pub(super) fn check(&self) -> Result<(), ConfigError> {
        self.check_edges()?;
        self.check_server()?;
        self.check_stores()?;
        self.check_secrets()?;
        self.check_llm_and_mcp()?;
        self.check_policies()
    }

    /// `[network]` rules, `[mcp] caps`, `[telemetry]`.
    fn check_edges(&self) -> Result<(), ConfigError> {
        self.network
            .rules()
            .map_err(|e| ConfigError(e.to_string()))?;
        if let Some((i, cap)) = self
            .mcp
            .caps
            .iter()
            .enumerate()
            .find(|(_, c)| !axon_core::CAPABILITIES.iter().any(|(name, _)| name == c))
        {
            let known: Vec<&str> = axon_core::CAPABILITIES.iter().map(|(n, _)| *n).collect();
            return Err(ConfigError(format!(
                "mcp.caps[{i}]: no capability {cap:?} (there are: {})",
                known.join(", ")
            )));
        }
        if let Some(ratio) = self.telemetry.sampling_ratio
            && !(0.0..=1.0).contains(&ratio)
        {
            return Err(ConfigError(format!(
                "telemetry.sampling_ratio: {ratio} is not between 0 and 1"
            )));
        }
        if let Some(url) = &self.telemetry.otlp_endpoint
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ConfigError(format!(
                "telemetry.otlp_endpoint: {url:?} is not an http:// or https:// URL"
            )));
        }
        Ok(())
    }

    /// `[server]`: tokens full and scoped.
    fn check_server(&self) -> Result<(), ConfigError> {
        if let Some(i) = self
            .server
            .auth_tokens
            .iter()
            .position(|t| t.trim().is_empty() || t.chars().any(char::is_whitespace))
        {
            return Err(ConfigError(format!(
                "server.auth_tokens[{i}]: a token may not be empty or hold spaces"
            )));
        }
        for (i, token) in self.server.tokens.iter().enumerate() {
            if token.env.trim().is_empty() {
                return Err(ConfigError(format!(
                    "server.tokens[{i}].env: name the environment variable that holds the token"
                )));
            }
            // A grant names a configured secret (a typo would grant nothing).
            for (k, name) in token.secrets.iter().enumerate() {
                if name != "*" && !self.secrets.contains_key(name) {
                    return Err(ConfigError(format!(
                        "server.tokens[{i}].secrets[{k}]: no secret named {name:?} in [secrets] (grant a configured one, or \"*\" for all)"
                    )));
                }
            }
        }
        let secrets: Vec<&str> = self.secrets.keys().map(String::as_str).collect();
        self.server.auth.check(&secrets)
    }

    /// `[shared]`, `[store]`, `[history]`: where state lives.
    fn check_stores(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.shared.redis_url
            && !url.starts_with("redis://")
        {
            return Err(ConfigError(format!(
                "shared.redis_url: {:?} is not a redis:// URL",
                axon_redis::redacted(url)
            )));
        }
        if let Some(url) = &self.store.url
            && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
        {
            return Err(ConfigError(format!(
                "store.url: {:?} is not a postgres:// URL",
                axon_redis::redacted(url)
            )));
        }
        if let Some(schema) = &self.store.schema
            && (schema.is_empty()
                || !schema
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(ConfigError(format!(
                "store.schema: {schema:?} may hold only letters, digits and _"
            )));
        }
        if self.store.schema.is_some() && self.store.url.is_none() {
            return Err(ConfigError(
                "store.schema: only with store.url (a PostgreSQL store)".into(),
            ));
        }
        if let Some(ms) = self.shared.timeout_ms
            && !(1..=5_000).contains(&ms)
        {
            return Err(ConfigError(format!(
                "shared.timeout_ms: {ms} is not between 1 and 5000"
            )));
        }
        if self.shared.key_prefix.as_deref().is_some_and(str::is_empty) {
            return Err(ConfigError(
                "shared.key_prefix: give a prefix (or leave the key out for \"axon:\")".into(),
            ));
        }
        if !(1..=100).contains(&self.server.tenant_share_percent) {
            return Err(ConfigError(format!(
                "server.tenant_share_percent: {} is not between 1 and 100",
                self.server.tenant_share_percent
            )));
        }
        if !matches!(self.history.durability.as_str(), "sync" | "async") {
            return Err(ConfigError(format!(
                "history.durability: {:?} must be \"sync\" or \"async\"",
                self.history.durability
            )));
        }
        Ok(())
    }

    /// `[secrets]`: names, and one source each.
    fn check_secrets(&self) -> Result<(), ConfigError> {
        for (name, secret) in &self.secrets {
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return Err(ConfigError(format!(
                    "secrets.{name}: a secret's name is letters, digits, '_' and '-'"
                )));
            }
            if secret.env.is_some() == secret.file.is_some() {
                return Err(ConfigError(format!(
                    "secrets.{name}: give exactly one of env = \"VAR\" and file = \"path\""
                )));
            }
        }
        Ok(())
    }

    /// `[llm]` and `[[mcp.servers]]` (names unique).
    fn check_llm_and_mcp(&self) -> Result<(), ConfigError> {
        if let Some(llm) = &self.llm {
            llm.check().map_err(|e| ConfigError(e.to_string()))?;
        }
        let mut names = std::collections::BTreeSet::new();
        for server in &self.mcp.servers {
            server.check().map_err(|e| ConfigError(e.to_string()))?;
            if !names.insert(server.name.as_str()) {
                return Err(ConfigError(format!(
                    "mcp.servers: two servers are named {:?}",
                    server.name
                )));
            }
        }
        Ok(())
    }

    /// Policy keys in `[defaults]`, `[tools.*]`, `[origins.*]` and each MCP server's `policy`, as the executor will layer them.
    fn check_policies(&self) -> Result<(), ConfigError> {
        axon_core::Policy::layered([&self.defaults_json()])
            .map_err(|e| ConfigError(format!("defaults.{}: {}", e.key, e.message)))?;
        for (tool, table) in &self.tools {
            let layer = table_json(table);
            axon_core::Policy::layered([&self.defaults_json(), &layer])
                .map_err(|e| ConfigError(format!("tools.{tool}.{}: {}", e.key, e.message)))?;
        }
        for (origin, table) in &self.origins {
            if axon_core::policy::dependency::origin(origin).as_deref()
                != Some(origin.trim_end_matches('/').to_ascii_lowercase().as_str())
            {
                return Err(ConfigError(format!(
                    "origins.{origin:?}: is not an origin: scheme, host and port only (https://api.example.com)"
                )));
            }
            let layer = table_json(table);
            axon_core::Policy::layered([&self.defaults_json(), &layer])
                .map_err(|e| ConfigError(format!("origins.{origin:?}.{}: {}", e.key, e.message)))?;
        }
        for server in &self.mcp.servers {
            let layer = serde_json::Value::Object(server.policy.clone());
            axon_core::Policy::layered([&self.defaults_json(), &layer]).map_err(|e| {
                ConfigError(format!(
                    "mcp.servers {:?}: policy.{}: {}",
                    server.name, e.key, e.message
                ))
            })?;
        }
        Ok(())
    }
}
