//! Name patterns, as tool filters (`browser_*`) and tenant grants
//! (`corp:team-*`) write them: `*` matches any run of characters, every
//! other character only itself (case counts). Hosts have their own rules
//! (`hosts.rs`).

/// `*` matches any run of characters (none included); everything else itself.
pub fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn a_star_matches_any_run_and_nothing_else_is_special() {
        assert!(matches("browser_*", "browser_click"));
        assert!(matches("*", ""));
        assert!(matches("a*b*c", "aXbYc"));
        assert!(!matches("a*b*c", "aXbY"));
        assert!(!matches("browser_*", "Browser_click"));
        assert!(!matches("corp:*", "token-1"));
        assert!(matches("corp:team-*", "corp:team-a"));
        assert!(!matches("ab*ba", "aba"), "the two ends may not overlap");
    }
}
