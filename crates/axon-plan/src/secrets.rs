//! Secrets in plans: referenced, never stored.
//!
//! A plan names a secret as `${secret.NAME}`; the runner reads its value from
//! where the configuration says (`[secrets] NAME = { env = "VAR" }` or
//! `{ file = "path" }`) when the step runs, hands it to the call, and tells the
//! executor to mask it wherever it would be stored. Literal secrets in a plan (a
//! `password:` parameter, text typed into a password field) are masked in every
//! stored form of the run: the plan document, checkpoints, the run result and the
//! events streamed to watchers. The caller of the run still gets the real results.
//!
//! A resumed run has only what was stored. A step that still has to run and
//! reads a masked value from a finished step's checkpoint fails, naming the
//! field, rather than sending `"***"` on to a tool.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use axon_core::redact::{REDACTED, is_secret_field};
use serde_json::Value;

use crate::plan::Plan;
use crate::template::{Reference, Segment, TemplateSource};

/// Where one secret's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretSource {
    /// An environment variable of the process.
    Env(String),
    /// A file, read whole, with one trailing newline dropped.
    File(PathBuf),
    /// A value held in memory (library callers and tests).
    Value(String),
}

/// The secrets plans may reference, by name, and which tenant may use which.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Secrets {
    sources: BTreeMap<String, SecretSource>,
    /// The names each tenant may use (`*`: all); `None` until one is
    /// granted, when every caller may use every secret (one user, or no
    /// tenants). Once any is granted, a tenant that is not listed gets none:
    /// a scoped client reads only what the operator gave it.
    grants: Option<BTreeMap<String, BTreeSet<String>>>,
}

impl Secrets {
    /// No secrets: every `${secret.…}` is a validation error.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add (or replace) a secret.
    pub fn with(mut self, name: impl Into<String>, source: SecretSource) -> Self {
        self.sources.insert(name.into(), source);
        self
    }

    /// Let `tenant` ([`axon_core::ToolCall::tenant`]) use the secrets
    /// `names` (`*`: every one), and from now on keep every tenant not
    /// granted any from all of them. The process's owner always may.
    /// `tenant` may be a pattern (`corp:*`, [`axon_core::glob`]) granting
    /// every tenant it matches.
    pub fn granting(
        mut self,
        tenant: impl Into<String>,
        names: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.grants
            .get_or_insert_with(BTreeMap::new)
            .entry(tenant.into())
            .or_default()
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Keep every tenant from every secret until one is granted some (a
    /// server with scoped tokens, none of which was granted a secret).
    pub fn closed_to_tenants(mut self) -> Self {
        self.grants.get_or_insert_with(BTreeMap::new);
        self
    }

    /// Whether a call made as `tenant` may use the secret `name`.
    pub fn allows(&self, tenant: Option<&str>, name: &str) -> bool {
        let (Some(tenant), Some(grants)) = (tenant, &self.grants) else {
            return true;
        };
        // A tenant is granted by its name, or by a pattern (`corp:team-*`:
        // the tenants an identity provider signs in, docs/security.md).
        let grants_name = |names: &BTreeSet<String>| names.contains("*") || names.contains(name);
        if grants.get(tenant).is_some_and(grants_name) {
            return true;
        }
        grants.iter().any(|(pattern, names)| {
            pattern.contains('*') && axon_core::glob::matches(pattern, tenant) && grants_name(names)
        })
    }

    /// Read a secret's value now for a call made as `tenant`: refused
    /// (naming the secret, never its value, and the same words whether or
    /// not it is configured) when the tenant was not granted it.
    pub fn resolve_as(&self, tenant: Option<&str>, name: &str) -> Result<String, SecretError> {
        if !self.allows(tenant, name) {
            return Err(SecretError::NotGranted {
                name: name.to_string(),
            });
        }
        self.resolve(name)
    }

    /// Whether a secret of this name is configured.
    pub fn contains(&self, name: &str) -> bool {
        self.sources.contains_key(name)
    }

    /// The configured names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sources.keys().map(String::as_str)
    }

    /// Read a secret's value now. The error names the secret and where it was
    /// looked for, never a value.
    pub fn resolve(&self, name: &str) -> Result<String, SecretError> {
        let name = name.to_string();
        match self.sources.get(&name) {
            None => Err(SecretError::NotConfigured { name }),
            Some(SecretSource::Value(v)) => Ok(v.clone()),
            Some(SecretSource::Env(var)) => std::env::var(var).map_err(|_| SecretError::EnvUnset {
                name,
                var: var.clone(),
            }),
            Some(SecretSource::File(path)) => std::fs::read_to_string(path)
                .map(|text| {
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    text.strip_suffix('\r').unwrap_or(text).to_string()
                })
                .map_err(|source| SecretError::Unreadable {
                    name,
                    path: path.clone(),
                    source: std::sync::Arc::new(source),
                }),
        }
    }
}

/// Why a secret has no value: it names the secret and where it was looked
/// for, never a value.
#[derive(Clone, Debug, thiserror::Error)]
pub enum SecretError {
    /// The caller is a tenant that was not granted this secret.
    #[error(
        "this client may not use the secret {name:?} (the operator grants secrets per client: secrets = [...] in its [[server.tokens]] entry, or [server.auth.issuers.secrets] for a signed-in tenant)"
    )]
    NotGranted {
        /// The name the template asked for.
        name: String,
    },
    /// No `[secrets]` entry has this name.
    #[error("no secret named {name:?} is configured ([secrets] {name} = {{ env = \"VAR\" }})")]
    NotConfigured {
        /// The name the template asked for.
        name: String,
    },
    /// Its environment variable is not set.
    #[error("secret {name:?}: the environment variable {var} is not set")]
    EnvUnset {
        /// The secret.
        name: String,
        /// The variable it reads.
        var: String,
    },
    /// Its file cannot be read.
    #[error("secret {name:?}: cannot read {}: {source}", path.display())]
    Unreadable {
        /// The secret.
        name: String,
        /// The file it reads.
        path: std::path::PathBuf,
        /// Why (shared: the error is cloned into each step that asked).
        source: std::sync::Arc<std::io::Error>,
    },
}

/// The plan as it may be stored: literal values under secret-named keys in
/// parameters are `"***"`. Templates (`${secret.TOKEN}`, `${steps.login.data.token}`)
/// are references, not values, and are kept so the document still reads.
pub fn stored_plan(plan: &Plan) -> Plan {
    let mut out = plan.clone();
    for step in &mut out.steps {
        mask_literals(&mut step.params);
        for fallback in &mut step.fallbacks {
            mask_literals(&mut fallback.params);
        }
    }
    out
}

/// [`stored_plan`] where it differs from `plan`; `None` when nothing in it is
/// masked, found without copying the whole plan (a large one is held once).
pub fn masked_plan(plan: &Plan) -> Option<Plan> {
    let differs = |params: &Value| {
        let mut masked = params.clone();
        mask_literals(&mut masked);
        masked != *params
    };
    plan.steps
        .iter()
        .any(|step| differs(&step.params) || step.fallbacks.iter().any(|f| differs(&f.params)))
        .then(|| stored_plan(plan))
}

fn mask_literals(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let literal = match v {
                    Value::String(s) => !s.contains("${"),
                    Value::Array(_) | Value::Object(_) => !holds_template(v),
                    _ => false,
                };
                if is_secret_field(key) && literal {
                    *v = Value::String(REDACTED.into());
                } else {
                    mask_literals(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_literals),
        _ => {}
    }
}

fn holds_template(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains("${"),
        Value::Array(items) => items.iter().any(holds_template),
        Value::Object(map) => map.values().any(holds_template),
        _ => false,
    }
}

/// JSON pointers of the `"***"` strings in a stored value: what storing masked
/// (a tool that really answered `"***"` is taken as masked too, which only makes
/// a resume stricter).
pub fn redacted_pointers(stored: &Value) -> Vec<String> {
    let mut out = Vec::new();
    stars(stored, &mut String::new(), &mut out);
    out
}

fn stars(stored: &Value, at: &mut String, out: &mut Vec<String>) {
    match stored {
        Value::Object(map) => {
            for (k, v) in map {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                stars(v, at, out);
                at.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                stars(v, at, out);
                at.truncate(len);
            }
        }
        Value::String(s) if s == REDACTED => out.push(at.clone()),
        _ => {}
    }
}

/// Mask, in a step's stored parameters, the literal values at `pointers` (the
/// arguments history masked: a password field's text). A pointer that lands on a
/// template, or inside what a template produced, is left alone: the template is
/// a reference, not the value.
pub fn mask_params(params: &mut Value, pointers: &[String]) {
    for pointer in pointers {
        if let Some(slot) = params.pointer_mut(pointer)
            && !holds_template(slot)
        {
            *slot = Value::String(REDACTED.into());
        }
    }
}

/// Where a template reads a step's data, as a JSON pointer below `data` (up to
/// the first `*`), for comparing with what a checkpoint masked.
pub fn reference_pointer(reference: &Reference) -> Option<String> {
    if matches!(reference.source, TemplateSource::Secret(_)) {
        return None;
    }
    let mut out = String::new();
    for segment in &reference.path {
        match segment {
            Segment::Key(k) => {
                out.push('/');
                out.push_str(&k.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Index(i) => {
                out.push('/');
                out.push_str(&i.to_string());
            }
            Segment::Each => break,
        }
    }
    Some(out)
}

/// Whether reading at `read` touches what is at `masked` (one holds the other).
pub fn overlaps(read: &str, masked: &str) -> bool {
    let within = |a: &str, b: &str| a == b || (a.starts_with(b) && a[b.len()..].starts_with('/'));
    within(read, masked) || within(masked, read) || read.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tenant_pattern_grants_the_tenants_it_matches_and_no_other() {
        let secrets = Secrets::new()
            .granting("corp:team-*", ["GH"])
            .granting("corp:alice", ["DB"])
            .granting("token-1", ["*"]);
        assert!(secrets.allows(Some("corp:team-a"), "GH"));
        assert!(!secrets.allows(Some("corp:team-a"), "DB"));
        assert!(secrets.allows(Some("corp:alice"), "DB"));
        assert!(!secrets.allows(Some("corp:alice"), "GH"));
        assert!(!secrets.allows(Some("other:team-a"), "GH"));
        assert!(secrets.allows(Some("token-1"), "GH"));
        // A tenant whose name holds a star is matched, not a pattern.
        assert!(!secrets.allows(Some("corp:*"), "DB"));
        assert!(
            secrets.allows(None, "DB"),
            "the process's owner may use every secret"
        );
    }

    #[test]
    fn literal_secrets_are_masked_and_templates_kept() {
        let plan = Plan::from_json(
            r##"{"steps": [{"tool": "http_request", "params": {
                "url": "https://x", "password": "hunter2", "api_token": "${secret.TOKEN}",
                "headers": {"Authorization": "Bearer abc", "Cookie": "${steps.a.data.c}"}}}]}"##,
        )
        .unwrap();
        let stored = stored_plan(&plan);
        assert_eq!(
            stored.steps[0].params,
            json!({"url": "https://x", "password": "***", "api_token": "${secret.TOKEN}",
                   "headers": {"Authorization": "***", "Cookie": "${steps.a.data.c}"}})
        );
    }

    #[test]
    fn redacted_pointers_name_what_storing_hid() {
        let stored = json!({"token": "***", "n": 1, "items": [{"cookie": "***"}, {"a/b": "***"}]});
        assert_eq!(
            redacted_pointers(&stored),
            vec!["/items/0/cookie", "/items/1/a~1b", "/token"]
        );
    }

    #[test]
    fn params_are_masked_only_where_literal() {
        let mut params = json!({"selector": "#pw", "text": "s3cret", "other": "${secret.PW}"});
        mask_params(
            &mut params,
            &["/text".into(), "/other".into(), "/missing".into()],
        );
        assert_eq!(
            params,
            json!({"selector": "#pw", "text": "***", "other": "${secret.PW}"})
        );
    }

    #[test]
    fn overlapping_reads_are_found() {
        assert!(overlaps("/token", "/token"));
        assert!(overlaps("/auth/token", "/auth"));
        assert!(overlaps("/auth", "/auth/token"));
        assert!(overlaps("", "/token"));
        assert!(!overlaps("/tokens", "/token"));
        assert!(!overlaps("/user", "/token"));
    }

    #[test]
    fn secrets_resolve_from_their_sources_without_naming_values() {
        let dir = std::env::temp_dir().join(format!("axon-secret-{}", std::process::id()));
        std::fs::write(&dir, "from-file\n").unwrap();
        let secrets = Secrets::new()
            .with("A", SecretSource::Value("v".into()))
            .with("B", SecretSource::File(dir.clone()))
            .with("C", SecretSource::Env("AXON_TEST_SURELY_UNSET_VAR".into()));
        assert_eq!(secrets.resolve("A").unwrap(), "v");
        assert_eq!(secrets.resolve("B").unwrap(), "from-file");
        let e = secrets.resolve("C").unwrap_err();
        assert!(matches!(e, SecretError::EnvUnset { .. }), "{e:?}");
        assert!(e.to_string().contains("AXON_TEST_SURELY_UNSET_VAR"), "{e}");
        assert!(
            secrets
                .resolve("D")
                .unwrap_err()
                .to_string()
                .contains("no secret named")
        );
        let _ = std::fs::remove_file(dir);
    }
}
