//! `[network]`'s lists: where the operator lets tool calls go.
//!
//! One set of rules for every way out — `http_request` (its URL and each
//! redirect hop) and every request the browser makes (its proxy checks each
//! one) — so that an operator writes a destination once:
//!
//! ```toml
//! [network]
//! deny_hosts = ["10.0.0.0/8", "*.corp.example"]
//! allow_ports = [80, 443, "8000-8999"]
//! ```
//!
//! A host entry is a name (`api.example`), a wildcard for its subdomains
//! (`*.example`), an address (`10.1.2.3`, `::1`) or a CIDR range
//! (`10.0.0.0/8`). Names match the host a call named; addresses and ranges
//! match every address it resolves to. `deny_*` wins over `allow_*`; a
//! non-empty `allow_*` list lets through only what it names. An address or
//! range in `allow_hosts` is "allowed by name": it lifts the built-in
//! refusal of link-local and private addresses for what it covers (never
//! the refusal of Axon's own endpoints). docs/security.md.

use std::net::IpAddr;
use std::ops::RangeInclusive;

use ipnet::IpNet;

/// The operator's allow and deny rules (`[network]`); empty allows all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rules {
    allow: Vec<Destination>,
    deny: Vec<Destination>,
    allow_ports: Vec<RangeInclusive<u16>>,
    deny_ports: Vec<RangeInclusive<u16>>,
}

/// One host entry: a name pattern, or a range of addresses.
#[derive(Clone, Debug, PartialEq)]
enum Destination {
    Name(String),
    Range(IpNet),
}

/// A `[network]` entry that is not a host, an address, a range or a port;
/// names the list and the entry.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("network.{list}: {entry:?} is {why}")]
pub struct RuleError {
    /// The list: `allow_hosts`, `deny_hosts`, `allow_ports`, `deny_ports`.
    pub list: &'static str,
    /// The entry as written.
    pub entry: String,
    /// What it should have been.
    pub why: &'static str,
}

impl Rules {
    /// The rules from `[network]`'s four lists (ports as `443` or
    /// `8000-8999`); the first bad entry is the error.
    pub fn parse(
        allow_hosts: &[String],
        deny_hosts: &[String],
        allow_ports: &[String],
        deny_ports: &[String],
    ) -> Result<Rules, RuleError> {
        let hosts = |list, entries: &[String]| -> Result<Vec<Destination>, RuleError> {
            entries.iter().map(|e| destination(list, e)).collect()
        };
        let ports = |list, entries: &[String]| -> Result<Vec<RangeInclusive<u16>>, RuleError> {
            entries.iter().map(|e| port_range(list, e)).collect()
        };
        Ok(Rules {
            allow: hosts("allow_hosts", allow_hosts)?,
            deny: hosts("deny_hosts", deny_hosts)?,
            allow_ports: ports("allow_ports", allow_ports)?,
            deny_ports: ports("deny_ports", deny_ports)?,
        })
    }

    /// Whether a decision on a name needs its addresses (a list holds an
    /// address or a range).
    pub fn has_ranges(&self) -> bool {
        self.allow
            .iter()
            .chain(&self.deny)
            .any(|d| matches!(d, Destination::Range(_)))
    }

    /// Whether `allow_hosts` names a range that holds `ip`: the built-in
    /// refusal of link-local and private addresses gives way to it.
    pub fn names_address(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.allow
            .iter()
            .any(|d| matches!(d, Destination::Range(net) if net.contains(&ip)))
    }

    /// Why the rules refuse `host` (as the call named it) at `ip` and
    /// `port`, if they do. An unknown address or port (`None`: a name not
    /// looked up yet, a resolver that is not told the port) is decided by
    /// what is known; the check that knows it decides the rest.
    pub fn refuses(&self, host: &str, ip: Option<IpAddr>, port: Option<u16>) -> Option<String> {
        if let Some(port) = port {
            if self.deny_ports.iter().any(|r| r.contains(&port)) {
                return Some(format!("port {port} is in [network] deny_ports"));
            }
            if !self.allow_ports.is_empty() && !self.allow_ports.iter().any(|r| r.contains(&port)) {
                return Some(format!("port {port} is not in [network] allow_ports"));
            }
        }
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let ip = ip.map(canonical);
        let holds = |d: &Destination, unknown: bool| match d {
            Destination::Name(pattern) => {
                crate::hosts::matches(pattern, host.trim_end_matches('.'))
            }
            Destination::Range(net) => ip.map_or(unknown, |ip| net.contains(&ip)),
        };
        if let Some(d) = self.deny.iter().find(|d| holds(d, false)) {
            return Some(match (d, ip) {
                (Destination::Range(net), Some(ip)) if host != ip.to_string() => {
                    format!("{host} is {ip}, in [network] deny_hosts ({net})")
                }
                _ => format!("host {host} is in [network] deny_hosts"),
            });
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|d| holds(d, true)) {
            return Some(format!("host {host} is not in [network] allow_hosts"));
        }
        None
    }
}

/// IPv4-mapped IPv6 as its IPv4, so `::ffff:10.0.0.1` meets `10.0.0.0/8`.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

fn destination(list: &'static str, entry: &str) -> Result<Destination, RuleError> {
    let bare = entry.trim().trim_start_matches('[').trim_end_matches(']');
    if let Ok(net) = bare.parse::<IpNet>() {
        return Ok(Destination::Range(net.trunc()));
    }
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(Destination::Range(IpNet::from(canonical(ip))));
    }
    let name = bare.strip_prefix("*.").unwrap_or(bare);
    let valid = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if !valid {
        return Err(RuleError {
            list,
            entry: entry.to_string(),
            why: "not a host name, *.domain, an address or a CIDR range",
        });
    }
    Ok(Destination::Name(bare.to_ascii_lowercase()))
}

fn port_range(list: &'static str, entry: &str) -> Result<RangeInclusive<u16>, RuleError> {
    let bad = || RuleError {
        list,
        entry: entry.to_string(),
        why: "not a port (1-65535) or a range of them (8000-8999)",
    };
    let port = |s: &str| {
        s.trim()
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(bad)
    };
    match entry.split_once('-') {
        Some((low, high)) => {
            let (low, high) = (port(low)?, port(high)?);
            if low > high {
                return Err(bad());
            }
            Ok(low..=high)
        }
        None => port(entry).map(|p| p..=p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow: &[&str], deny: &[&str], allow_ports: &[&str], deny_ports: &[&str]) -> Rules {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Rules::parse(&own(allow), &own(deny), &own(allow_ports), &own(deny_ports)).unwrap()
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn empty_rules_refuse_nothing() {
        let r = Rules::default();
        assert_eq!(r.refuses("example.com", ip("10.0.0.1"), Some(22)), None);
        assert!(!r.has_ranges());
    }

    #[test]
    fn deny_wins_and_ranges_match_resolved_addresses() {
        let r = rules(
            &["*.example.com", "10.0.0.0/8"],
            &["10.9.0.0/16", "bad.example.com"],
            &[],
            &[],
        );
        assert!(r.has_ranges());
        assert_eq!(
            r.refuses("api.example.com", ip("93.184.216.34"), Some(443)),
            None
        );
        assert_eq!(r.refuses("internal", ip("10.1.2.3"), Some(80)), None);
        let why = r.refuses("db", ip("10.9.1.1"), Some(5432)).unwrap();
        assert!(
            why.contains("db is 10.9.1.1, in [network] deny_hosts (10.9.0.0/16)"),
            "{why}"
        );
        assert!(
            r.refuses("bad.example.com", None, Some(443))
                .unwrap()
                .contains("deny_hosts")
        );
        assert!(r.refuses("BAD.example.com.", ip("1.1.1.1"), None).is_some());
        let why = r.refuses("other.org", ip("1.1.1.1"), Some(443)).unwrap();
        assert!(why.contains("not in [network] allow_hosts"), "{why}");
        // A name not looked up yet may still resolve into an allowed range.
        assert_eq!(r.refuses("other.org", None, Some(443)), None);
        // IPv4-mapped IPv6 meets the IPv4 range.
        assert!(r.refuses("x", ip("::ffff:10.9.0.1"), None).is_some());
    }

    #[test]
    fn ports_are_checked_when_known() {
        let r = rules(&[], &[], &["80", "443", "8000-8999"], &["8080"]);
        assert_eq!(r.refuses("a", None, Some(8443)), None);
        assert!(
            r.refuses("a", None, Some(8080))
                .unwrap()
                .contains("deny_ports")
        );
        assert!(
            r.refuses("a", None, Some(22))
                .unwrap()
                .contains("not in [network] allow_ports")
        );
        assert_eq!(r.refuses("a", ip("1.2.3.4"), None), None);
    }

    #[test]
    fn an_allowed_range_names_its_addresses() {
        let r = rules(&["169.254.169.254", "fd00::/8"], &[], &[], &[]);
        assert!(r.names_address("169.254.169.254".parse().unwrap()));
        assert!(r.names_address("fd12::1".parse().unwrap()));
        assert!(!r.names_address("169.254.1.1".parse().unwrap()));
        assert!(!rules(&["*.example"], &[], &[], &[]).names_address("10.0.0.1".parse().unwrap()));
    }

    #[test]
    fn bad_entries_name_their_list() {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (allow, deny, ports, why) in [
            (vec!["http://x"], vec![], vec![], "allow_hosts"),
            (vec![], vec!["10.0.0.0/33"], vec![], "deny_hosts"),
            (vec![], vec!["a..b"], vec![], "deny_hosts"),
            (vec![], vec!["*"], vec![], "deny_hosts"),
            (vec![], vec![], vec!["0"], "allow_ports"),
            (vec![], vec![], vec!["90-80"], "allow_ports"),
            (vec![], vec![], vec!["65536"], "allow_ports"),
        ] {
            let e = Rules::parse(&own(&allow), &own(&deny), &own(&ports), &[]).unwrap_err();
            assert_eq!(e.list, why, "{e}");
            assert!(
                e.to_string().starts_with(&format!("network.{why}: ")),
                "{e}"
            );
        }
    }
}
