//! The tool registry: every tool Axon can call, by name, with its schemas compiled
//! once. Front ends list it (`axon tools`, MCP `tools/list`, OpenAI function specs);
//! the executor looks tools up in it.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::schema::Schema;
use crate::tool::{Tool, ToolSpec};

/// Why a tool could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The name does not match `^[a-zA-Z0-9_-]{1,64}$`.
    #[error("tool name {0:?} is invalid: it must match ^[a-zA-Z0-9_-]{{1,64}}$")]
    InvalidName(String),
    /// Another tool already has this name.
    #[error("a tool named {0:?} is already registered")]
    Duplicate(String),
    /// The input or output schema does not compile.
    #[error("tool {tool:?}: {which} schema is invalid: {message}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// What the schema compiler said.
        message: String,
    },
}

/// Whether `name` is a valid tool name (an OpenAI function name and an MCP tool name).
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A tool with its compiled schemas.
#[derive(Clone)]
pub struct RegisteredTool {
    /// The tool itself.
    pub tool: Arc<dyn Tool>,
    /// Its compiled input schema.
    pub input: Arc<Schema>,
    /// Its compiled output schema, when it has one.
    pub output: Option<Arc<Schema>>,
}

impl RegisteredTool {
    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }
}

/// Tools by name, sorted (so listings are stable).
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, RegisteredTool>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a tool; its name and schemas are checked now, not at call time.
    pub fn register(&mut self, tool: impl Tool) -> Result<(), RegistryError> {
        self.register_arc(Arc::new(tool))
    }

    /// Add a tool that is already shared.
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let spec = tool.spec();
        let name = spec.name.clone();
        if !is_valid_tool_name(&name) {
            return Err(RegistryError::InvalidName(name));
        }
        if self.tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        let compile = |schema, which| {
            Schema::compile(schema)
                .map(Arc::new)
                .map_err(|e| RegistryError::InvalidSchema {
                    tool: name.clone(),
                    which,
                    message: e.to_string(),
                })
        };
        let input = compile(&spec.input_schema, "input")?;
        let output = spec
            .output_schema
            .as_ref()
            .map(|s| compile(s, "output"))
            .transpose()?;
        self.tools.insert(
            name,
            RegisteredTool {
                tool,
                input,
                output,
            },
        );
        Ok(())
    }

    /// Look a tool up.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    /// Whether a tool exists.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Every tool, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    /// Every spec, sorted by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.iter().map(|t| t.spec().clone()).collect()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_openai_and_mcp_rule() {
        assert!(is_valid_tool_name("browser_click"));
        assert!(is_valid_tool_name("srv__tool-1"));
        assert!(is_valid_tool_name(&"a".repeat(64)));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name(&"a".repeat(65)));
        assert!(!is_valid_tool_name("has space"));
        assert!(!is_valid_tool_name("dot.ted"));
    }
}
