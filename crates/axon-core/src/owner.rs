//! Who a stored or pooled thing belongs to.
//!
//! One `axon serve` answers many clients at once: scoped tokens, MCP
//! sessions, plans that pages wrote. Each thing Axon keeps for a caller (a
//! file, a group of history entries, a browser session) is keyed by its
//! [`Owner`] as well as by its name, so that two tenants who pick the same
//! name (a correlation id, a file name) get two things, and neither can read,
//! trim, overwrite or squat on the other's. The process's owner (the
//! operator, a single-user `axon mcp`, an unscoped token) keeps the
//! behaviour of a one-user Axon: its keys are the bare names, and it may see
//! what every tenant keeps (docs/security.md, "Who owns what").

use smol_str::SmolStr;

/// Who makes a call, and so who owns what it leaves behind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Owner {
    /// The process's owner: keys are bare names, and it sees every tenant's.
    #[default]
    Process,
    /// A tenant (a scoped token, an MCP session without tokens): sees only
    /// its own.
    Tenant(SmolStr),
}

impl Owner {
    /// The owner of a call made as `tenant` ([`crate::ToolCall::tenant`]).
    pub fn of(tenant: Option<&str>) -> Owner {
        match tenant {
            None => Owner::Process,
            Some(name) => Owner::Tenant(SmolStr::from(name)),
        }
    }

    /// The tenant's name; `None` for the process's owner.
    pub fn tenant(&self) -> Option<&str> {
        match self {
            Owner::Process => None,
            Owner::Tenant(name) => Some(name),
        }
    }

    /// The owner's part of a stored key: empty for the process's owner (what
    /// a one-user Axon stored before owners were keys), the tenant's name
    /// otherwise.
    pub fn key(&self) -> &str {
        self.tenant().unwrap_or_default()
    }

    /// Whether this owner may see what `other` keeps: the process's owner
    /// sees everything, a tenant only its own.
    pub fn sees(&self, other: &Owner) -> bool {
        matches!(self, Owner::Process) || self == other
    }

    /// A folder name for this tenant's files: its name with every byte that
    /// is not a letter, a digit, `_` or `-` written as `%XX`, so no tenant
    /// name is a path, a dot file or another tenant's folder. `None` for the
    /// process's owner, whose files are the folder itself. (An empty name is
    /// `%`, which no other name becomes.)
    pub fn folder(&self) -> Option<String> {
        let name = self.tenant()?;
        if name.is_empty() {
            return Some("%".into());
        }
        let mut folder = String::with_capacity(name.len());
        for b in name.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-') {
                folder.push(char::from(b));
            } else {
                folder.push_str(&format!("%{b:02X}"));
            }
        }
        Some(folder)
    }
}

/// Stored as the tenant's name, or nothing (`null`) for the process's
/// owner: what records kept as `tenant` before owners were a type.
impl serde::Serialize for Owner {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.tenant().serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Owner {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Owner::of(
            Option::<String>::deserialize(deserializer)?.as_deref(),
        ))
    }
}

impl schemars::JsonSchema for Owner {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Owner".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Option::<String>::json_schema(generator)
    }
}

impl Owner {
    /// Whether this is the process's owner (records leave its name out).
    pub fn is_process(&self) -> bool {
        matches!(self, Owner::Process)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_sees_every_tenant_and_a_tenant_only_itself() {
        let a = Owner::of(Some("token-1"));
        let b = Owner::of(Some("token-2"));
        assert!(Owner::Process.sees(&a));
        assert!(a.sees(&a));
        assert!(!a.sees(&b));
        assert!(!a.sees(&Owner::Process));
        assert_eq!(Owner::Process.key(), "");
        assert_eq!(a.key(), "token-1");
    }

    #[test]
    fn a_tenant_folder_is_one_plain_component() {
        assert_eq!(Owner::Process.folder(), None);
        assert_eq!(Owner::of(Some("token-1")).folder().unwrap(), "token-1");
        for hostile in ["..", "../x", ".hidden", "a/b", "a%2Fb", ""] {
            let folder = Owner::of(Some(hostile)).folder().unwrap();
            assert!(
                !folder.contains(['/', '.']),
                "{hostile:?} became {folder:?}"
            );
        }
        // Two names never share a folder.
        assert_ne!(
            Owner::of(Some("a/b")).folder(),
            Owner::of(Some("a%2Fb")).folder()
        );
    }
}
