//! Host patterns, as the allow and deny lists of `[http]` and `[browser]` write
//! them: `example.com` matches that host exactly (ignoring case), `*.example.com`
//! matches any subdomain of it (not `example.com` itself).

/// Whether `host` matches any of `patterns`.
pub fn matches_any(patterns: &[String], host: &str) -> bool {
    patterns.iter().any(|pattern| matches(pattern, host))
}

/// Whether `host` matches one pattern.
pub fn matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(domain) => {
            host.len() > domain.len() + 1 && {
                // `get` rather than slicing: a non-ASCII host must not panic.
                let split = host.len() - domain.len();
                match (host.get(..split), host.get(split..)) {
                    (Some(sub), Some(tail)) => {
                        tail.eq_ignore_ascii_case(domain) && sub.ends_with('.')
                    }
                    _ => false,
                }
            }
        }
        None => pattern.eq_ignore_ascii_case(host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_wildcard_patterns() {
        assert!(matches("Example.com", "example.COM"));
        assert!(!matches("example.com", "api.example.com"));
        assert!(matches("*.example.com", "api.Example.com"));
        assert!(!matches("*.example.com", "example.com"));
        assert!(!matches("*.example.com", "badexample.com"));
        assert!(!matches("*.b.test", "é.b.tesé"));
        assert!(matches_any(
            &["a.test".into(), "*.b.test".into()],
            "x.b.test"
        ));
    }
}
