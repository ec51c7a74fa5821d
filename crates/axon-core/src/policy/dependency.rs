//! Dependency keys: what a tool's stateful policies are kept for.
//!
//! A circuit breaker exists to stop calling a dependency that is down, and the
//! dependency is not always the tool: `http_request` talks to many hosts, the
//! browser's navigation to many sites, and one imported MCP server serves many
//! tools. So the breaker, the rate limit and bulkhead, the retry budget and the
//! latency sketch behind `"auto"` timeouts are kept per **dependency key**, as
//! Envoy ejects one upstream host rather than the cluster and Polly gives each
//! dependency its own named breaker:
//!
//! - `tool`: one state for the tool (the default for plain tools);
//! - `origin`: one per scheme, host and port of the call's `url` argument (the
//!   default for `http_request` and `browser_navigate`);
//! - `server`: one for every tool of an imported MCP server (their default);
//! - a template over the arguments, `"${args.region}"`: one per value.
//!
//! A tool says what it reaches by default ([`Dependency`], on its spec); the
//! policy key `key` overrides it (`[tools.<name>] key = "tool"`). The key a
//! call was kept under is in its provenance (`dependency`) and in a
//! `circuit_open` error's message.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use smol_str::SmolStr;

use super::PolicyError;
pub use crate::tool::Dependency;

/// The policy key `key`: which dependency a tool's stateful policies are kept
/// for. Written as `"tool"`, `"origin"`, `"server"` or a template such as
/// `"${args.region}"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyPolicy {
    /// One state for the tool.
    Tool,
    /// One per origin of the `url` argument.
    Origin,
    /// One for the tool's MCP server (the tool's own for a tool of no server).
    Server,
    /// One per value of the template over the arguments.
    Template(String),
}

impl KeyPolicy {
    fn parse(text: &str) -> Result<KeyPolicy, PolicyError> {
        match text {
            "tool" => Ok(KeyPolicy::Tool),
            "origin" => Ok(KeyPolicy::Origin),
            "server" => Ok(KeyPolicy::Server),
            t if t.contains("${args.") => {
                Template::parse(t)?;
                Ok(KeyPolicy::Template(t.to_string()))
            }
            other => Err(PolicyError::new(
                "key",
                format!(
                    "{other:?} is not \"tool\", \"origin\", \"server\" or a template over the arguments such as \"${{args.region}}\""
                ),
            )),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            KeyPolicy::Tool => "tool",
            KeyPolicy::Origin => "origin",
            KeyPolicy::Server => "server",
            KeyPolicy::Template(t) => t,
        }
    }
}

impl Serialize for KeyPolicy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for KeyPolicy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        KeyPolicy::parse(&text).map_err(|e| serde::de::Error::custom(e.message))
    }
}

/// The key one call is kept under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// The tool's own state.
    Tool,
    /// The state of the tool's MCP server, shared by its tools.
    Server,
    /// The tool's state for one origin or template value.
    Keyed(SmolStr),
}

/// Longest key kept: a longer value (a template over a big argument) is cut,
/// so that one call cannot make the key space costly.
const MAX_KEY_LEN: usize = 256;

/// Resolve the key of one call: the policy's `key` when set, else what the
/// tool reaches by default. An argument that does not give a key (no `url`,
/// one that is not an absolute URL with a host) leaves the call on the
/// tool's own state, where a bad argument fails validation anyway.
pub fn resolve(policy: Option<&KeyPolicy>, default: &Dependency, args: &Value) -> Key {
    let rule = match (policy, default) {
        (Some(KeyPolicy::Tool), _) => return Key::Tool,
        (Some(KeyPolicy::Server), Dependency::Server(_)) => return Key::Server,
        (Some(KeyPolicy::Server), _) => return Key::Tool,
        (Some(KeyPolicy::Origin), _) | (None, Dependency::Origin) => None,
        (Some(KeyPolicy::Template(t)), _) => Some(t.as_str()),
        (None, Dependency::Server(_)) => return Key::Server,
        (None, Dependency::Tool) => return Key::Tool,
    };
    let key = match rule {
        None => args.get("url").and_then(Value::as_str).and_then(origin),
        Some(template) => Template::parse(template)
            .ok()
            .map(|t| t.render(args))
            .filter(|k| !k.is_empty()),
    };
    match key {
        Some(k) => Key::Keyed(SmolStr::from(cut(&k))),
        None => Key::Tool,
    }
}

/// `scheme://host[:port]` of an absolute URL, lowercased, with the default
/// port left out (as browsers serialise an origin); `None` for a URL without
/// a host (`about:blank`, `data:`, `file:`).
pub fn origin(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    parsed.host_str()?;
    match parsed.origin() {
        o @ url::Origin::Tuple(..) => Some(o.ascii_serialization()),
        url::Origin::Opaque(_) => None,
    }
}

fn cut(key: &str) -> &str {
    if key.len() <= MAX_KEY_LEN {
        return key;
    }
    let mut end = MAX_KEY_LEN;
    while !key.is_char_boundary(end) {
        end -= 1;
    }
    &key[..end]
}

/// A key template: text with `${args.<path>}` holes, the path's segments
/// separated by dots.
struct Template<'a> {
    parts: Vec<Part<'a>>,
}

enum Part<'a> {
    Text(&'a str),
    Arg(Vec<&'a str>),
}

impl<'a> Template<'a> {
    fn parse(text: &'a str) -> Result<Template<'a>, PolicyError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            parts.push(Part::Text(&rest[..start]));
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(PolicyError::new("key", "a \"${\" is not closed by \"}\""));
            };
            let Some(path) = after[..end].strip_prefix("args.") else {
                return Err(PolicyError::new(
                    "key",
                    format!(
                        "${{{}}}: a key template reads only the arguments (${{args.<name>}})",
                        &after[..end]
                    ),
                ));
            };
            if path.is_empty() || path.split('.').any(str::is_empty) {
                return Err(PolicyError::new(
                    "key",
                    format!("${{args.{path}}} is not a path into the arguments"),
                ));
            }
            parts.push(Part::Arg(path.split('.').collect()));
            rest = &after[end + 1..];
        }
        parts.push(Part::Text(rest));
        Ok(Template { parts })
    }

    /// The template over `args`: a string argument as it is, anything else as
    /// compact JSON, a missing one as nothing.
    fn render(&self, args: &Value) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Arg(path) => {
                    let found = path.iter().try_fold(args, |v, seg| {
                        v.get(seg)
                            .or_else(|| seg.parse::<usize>().ok().and_then(|i| v.get(i)))
                    });
                    match found {
                        Some(Value::String(s)) => out.push_str(s),
                        Some(Value::Null) | None => {}
                        Some(other) => out.push_str(&other.to_string()),
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn origins_are_scheme_host_and_port() {
        assert_eq!(
            origin("HTTPS://API.Example.com:443/x?y#z").as_deref(),
            Some("https://api.example.com")
        );
        assert_eq!(
            origin("http://127.0.0.1:8080/a").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(origin("about:blank"), None);
        assert_eq!(origin("data:text/html,x"), None);
        assert_eq!(origin("not a url"), None);
    }

    #[test]
    fn the_default_comes_from_the_tool_and_the_policy_overrides_it() {
        let args = json!({"url": "https://a.example/x", "region": "eu"});
        let keyed = |k: &str| Key::Keyed(SmolStr::from(k));
        assert_eq!(resolve(None, &Dependency::Tool, &args), Key::Tool);
        assert_eq!(
            resolve(None, &Dependency::Origin, &args),
            keyed("https://a.example")
        );
        assert_eq!(
            resolve(Some(&KeyPolicy::Tool), &Dependency::Origin, &args),
            Key::Tool
        );
        let server = Dependency::Server("s".into());
        assert_eq!(resolve(None, &server, &args), Key::Server);
        assert_eq!(
            resolve(Some(&KeyPolicy::Server), &Dependency::Tool, &args),
            Key::Tool
        );
        let by_region = KeyPolicy::parse("region ${args.region}").unwrap();
        assert_eq!(
            resolve(Some(&by_region), &Dependency::Tool, &args),
            keyed("region eu")
        );
        // No url: the tool's own state.
        assert_eq!(resolve(None, &Dependency::Origin, &json!({})), Key::Tool);
    }

    #[test]
    fn keys_are_bounded() {
        let long = "x".repeat(10_000);
        let by_name = KeyPolicy::parse("${args.name}").unwrap();
        let Key::Keyed(k) = resolve(Some(&by_name), &Dependency::Tool, &json!({"name": long}))
        else {
            panic!("keyed");
        };
        assert_eq!(k.len(), MAX_KEY_LEN);
    }

    #[test]
    fn bad_keys_are_named() {
        for bad in ["host", "${args.}", "${env.HOME}", "${args.a"] {
            let err = KeyPolicy::parse(bad).unwrap_err();
            assert_eq!(err.key, "key", "{bad}");
        }
        assert_eq!(KeyPolicy::parse("origin").unwrap(), KeyPolicy::Origin);
    }
}
