//! The plan document (docs/design.md, "Plans"): a name, how many steps may run at once,
//! whether the first failure stops everything, default policy keys, and the steps —
//! each a tool call with parameters that may reference earlier results, its
//! dependencies, policy overrides and fallbacks. Parsed from YAML or JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Steps running at once unless the plan says otherwise.
pub const DEFAULT_MAX_PARALLEL: usize = 5;

/// A plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// A name for humans and history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Steps running at once.
    #[serde(default = "default_max_parallel")]
    #[schemars(range(min = 1))]
    pub max_parallel: usize,
    /// Cancel running steps and skip the rest at the first failure.
    #[serde(default)]
    pub fail_fast: bool,
    /// Policy keys for every step (over the executor's configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<Value>,
    /// The steps, addressable by index or by id.
    #[schemars(length(min = 1))]
    pub steps: Vec<Step>,
}

fn default_max_parallel() -> usize {
    DEFAULT_MAX_PARALLEL
}

/// One step: a tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Optional name other steps can reference (`steps.<id>`, `depends_on: [id]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool to call.
    pub tool: String,
    /// Its arguments; strings may hold templates (`${step[0].data.*.id}`).
    #[serde(default = "empty_object")]
    pub params: Value,
    /// Steps that must finish first, by id or index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<StepRef>,
    /// Policy keys for this step only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Value>,
    /// Tools to try if this one fails for good; params may hold templates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<Fallback>,
    /// How long the step is expected to take, ms. When every step declares it, the
    /// scheduler orders ready steps by remaining duration instead of step count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_ms: Option<u64>,
    /// Call the tool once for this key (within a day, across runs and
    /// replicas sharing the store): a step with a key already answered gets
    /// that answer (as stored: secrets masked) without calling. A plain
    /// string, no templates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

/// A fallback of a step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// The tool.
    pub tool: String,
    /// Its arguments (templates allowed).
    #[serde(default = "empty_object")]
    pub params: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// A reference to a step: its index or its id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum StepRef {
    /// By position, from 0.
    Index(usize),
    /// By id.
    Id(String),
}

impl std::fmt::Display for StepRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepRef::Index(i) => write!(f, "step[{i}]"),
            StepRef::Id(id) => write!(f, "{id}"),
        }
    }
}

/// The deepest nesting a YAML plan may have (JSON's parser stops at 128).
pub const MAX_NESTING: usize = 64;

/// An upper estimate of a YAML document's nesting: indentation levels open at
/// a line, plus compact sequence entries (`- - - x`) starting it, plus flow
/// brackets open (outside quotes). Stops counting once past [`MAX_NESTING`].
fn yaml_nesting(text: &str) -> usize {
    let mut deepest = 0;
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    for line in text.lines() {
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        if flow == 0 && !body.is_empty() && !body.starts_with('#') {
            while indents.last().is_some_and(|&top| top >= indent) {
                indents.pop();
            }
            indents.push(indent);
        }
        let mut dashes = 0;
        let mut rest = body;
        while let Some(after) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("? ")) {
            dashes += 1;
            rest = after.trim_start_matches(' ');
        }
        let mut quote: Option<char> = None;
        for c in rest.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => break,
                (None, '[' | '{') => flow += 1,
                (None, ']' | '}') => flow = flow.saturating_sub(1),
                _ => {}
            }
            deepest = deepest.max(indents.len() + dashes + flow);
            if deepest > MAX_NESTING {
                return deepest;
            }
        }
        deepest = deepest.max(indents.len() + dashes + flow);
        if deepest > MAX_NESTING {
            return deepest;
        }
    }
    deepest
}

/// The document could not be read as a plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plan: {0}")]
pub struct ParseError(pub String);

impl Plan {
    /// Parse YAML or JSON (a document starting with `{` is read as JSON, for its
    /// more precise error messages; anything else as YAML).
    pub fn parse(text: &str) -> Result<Plan, ParseError> {
        if text.trim_start().starts_with('{') {
            Self::from_json(text)
        } else {
            Self::from_yaml(text)
        }
    }

    /// Parse JSON.
    pub fn from_json(text: &str) -> Result<Plan, ParseError> {
        serde_json::from_str(text).map_err(|e| ParseError(e.to_string()))
    }

    /// Parse YAML. Nesting deeper than [`MAX_NESTING`] is refused before the
    /// parser sees it (a 100 000-deep `[[[…` costs a YAML parser quadratic time);
    /// alias bombs are refused by the parser's own repetition limit.
    pub fn from_yaml(text: &str) -> Result<Plan, ParseError> {
        let depth = yaml_nesting(text);
        if depth > MAX_NESTING {
            return Err(ParseError(format!(
                "the document nests deeper than {MAX_NESTING} levels (at least {depth})"
            )));
        }
        serde_yaml_ng::from_str(text).map_err(|e| ParseError(e.to_string()))
    }

    /// How a step is named in messages: its id, or `step[N]`.
    pub fn label(&self, index: usize) -> String {
        match self.steps.get(index).and_then(|s| s.id.as_deref()) {
            Some(id) => id.to_string(),
            None => format!("step[{index}]"),
        }
    }

    /// The index of a step reference, if it names a step.
    pub fn index_of(&self, r: &StepRef) -> Option<usize> {
        match r {
            StepRef::Index(i) => (*i < self.steps.len()).then_some(*i),
            StepRef::Id(id) => self.steps.iter().position(|s| s.id.as_deref() == Some(id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_json_give_the_same_plan() {
        let yaml = "name: p\nsteps:\n  - id: a\n    tool: echo\n    params: {x: 1}\n  - tool: echo\n    depends_on: [a, 0]\n";
        let json = r#"{"name":"p","steps":[{"id":"a","tool":"echo","params":{"x":1}},{"tool":"echo","depends_on":["a",0]}]}"#;
        let (y, j) = (Plan::parse(yaml).unwrap(), Plan::parse(json).unwrap());
        assert_eq!(y, j);
        assert_eq!(y.max_parallel, 5);
        assert!(!y.fail_fast);
        assert_eq!(
            y.steps[1].depends_on,
            [StepRef::Id("a".into()), StepRef::Index(0)]
        );
    }

    #[test]
    fn hostile_yaml_is_refused_quickly() {
        let start = std::time::Instant::now();
        for bomb in [
            "[".repeat(100_000),
            "- ".repeat(100_000) + "x",
            "steps:\n".to_string() + &(0..200).map(|i| " ".repeat(i) + "a:\n").collect::<String>(),
        ] {
            let err = Plan::parse(&bomb).unwrap_err();
            assert!(err.0.contains("deeper than 64"), "{err}");
        }
        // A billion laughs: the parser's repetition limit refuses it.
        let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (i, name) in ["b", "c", "d", "e", "f", "g", "h", "i"].iter().enumerate() {
            let prev = ["a", "b", "c", "d", "e", "f", "g", "h"][i];
            laughs.push_str(&format!(
                "{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        laughs.push_str("steps: *i\n");
        assert!(Plan::parse(&laughs).is_err());
        // 100k-deep JSON stops at serde_json's recursion limit.
        assert!(Plan::parse(&("{\"steps\":".to_string() + &"[".repeat(100_000))).is_err());
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        // Real plans are far from the limit, strings and comments included.
        let plan = "steps: # [[[[ not nesting\n  - tool: echo\n    params: {text: \"[[[[{{{\", list: [[1, [2]], {a: {b: c}}]}\n";
        Plan::parse(plan).unwrap();
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_key() {
        let err = Plan::parse("steps:\n  - tool: echo\n    parms: {}\n").unwrap_err();
        assert!(err.0.contains("parms"), "{err}");
    }
}
