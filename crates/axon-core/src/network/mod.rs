//! Addresses no tool call reaches, whatever the host lists allow.
//!
//! `http_request` and the browser take URLs from agents, and agents take them
//! from pages. Some destinations are never a tool's business:
//!
//! - **link-local and cloud metadata addresses** (169.254.0.0/16 holds
//!   169.254.169.254; fe80::/10; `fd00:ec2::254`), unspecified and broadcast:
//!   a cloud machine's credentials live there;
//! - **Axon's own endpoints** on loopback: the `axon serve` listener (a call
//!   to it would step around `[mcp] tools` and token scopes), the browser's
//!   proxy and Chromium's DevTools port (which lists every session and opens
//!   `file:` tabs). Each registers its port here when it starts listening
//!   ([`register_own_port`]); a DevTools port is refused by every other Axon
//!   process on the machine too ([`register_devtools_port`], `local.rs`).
//!
//! - on a **shared server** ([`deny_private`]), also loopback, private
//!   (10/8, 172.16/12, 192.168/16), carrier-grade NAT (100.64/10) and IPv6
//!   unique-local addresses: what sits behind the server is not its clients'
//!   to reach. A developer's local process reaches them (its own app on
//!   `localhost:3000`).
//!
//! Then the operator's own lists, `[network]`'s allow and deny rules for
//! hosts, ranges and ports ([`Rules`], set with [`set_rules`]).
//!
//! The tools ask [`refused`] about every address they connect to (the
//! browser in its proxy, `http_request` in its resolver and before each
//! request and redirect). docs/security.md.

mod local;
mod rules;

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, RwLock};

pub use rules::{RuleError, Rules};

static DENY_PRIVATE: AtomicBool = AtomicBool::new(false);

static RULES: LazyLock<RwLock<Arc<Rules>>> = LazyLock::new(RwLock::default);

/// Hold every tool call of this process to `rules` (`[network]`'s lists),
/// in place of the ones set before.
pub fn set_rules(rules: Rules) {
    *RULES.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(rules);
}

/// The rules in force ([`set_rules`]; empty until then).
pub fn rules() -> Arc<Rules> {
    RULES.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Refuse (or allow again) loopback and private addresses for every tool
/// call of this process: `axon serve` sets it when it serves others (a
/// non-loopback bind, or scoped tokens) unless `[network] allow_private`.
pub fn deny_private(deny: bool) {
    DENY_PRIVATE.store(deny, Ordering::SeqCst);
}

/// Whether loopback and private addresses are refused ([`deny_private`]).
pub fn private_denied() -> bool {
    DENY_PRIVATE.load(Ordering::SeqCst)
}

/// Loopback, private, carrier-grade NAT and unique-local addresses
/// (IPv4-mapped IPv6 as its IPv4).
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback() || v4.is_private() || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_private(IpAddr::V4(v4)),
            None => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
        },
    }
}

/// Whether no call may reach `ip`, which `host` resolved to, whatever the
/// port: [`never_reached`], private addresses on a shared server (each
/// unless `[network] allow_hosts` names it), and the operator's rules.
pub fn refused_address(host: &str, ip: IpAddr) -> bool {
    let rules = rules();
    let built_in = never_reached(ip) || (private_denied() && is_private(ip));
    (built_in && !rules.names_address(ip)) || rules.refuses(host, Some(ip), None).is_some()
}

/// Whether deciding on `host:port` needs the host's addresses: it may be
/// one of Axon's own ports, private addresses are refused, or the rules
/// hold an address range.
pub fn needs_lookup(port: u16) -> bool {
    is_own_port(port) || private_denied() || rules().has_ranges()
}

static OWN_PORTS: LazyLock<RwLock<BTreeSet<u16>>> = LazyLock::new(|| RwLock::new(BTreeSet::new()));

/// Say that this process listens on `port` on loopback (a server, a proxy):
/// no tool call of this process connects to it.
pub fn register_own_port(port: u16) {
    if port != 0 {
        OWN_PORTS
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(port);
    }
}

/// Say that this process's Chromium listens for DevTools on loopback
/// `port`: no tool call of any Axon process on the machine connects to it
/// (it lists every session and opens `file:` tabs). Another Axon's server
/// or proxy is a service like any other local one, reached or not by the
/// rules; its browser is not.
pub fn register_devtools_port(port: u16) {
    if port != 0 {
        register_own_port(port);
        local::announce(port);
    }
}

/// Say that this process no longer listens on `port` (the endpoint closed;
/// the port may be someone else's next).
pub fn forget_own_port(port: u16) {
    OWN_PORTS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&port);
    local::withdraw(port);
}

/// Whether `port` is a loopback endpoint of this process, or the DevTools
/// port of another live Axon process on the machine.
pub fn is_own_port(port: u16) -> bool {
    let this_process = OWN_PORTS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&port);
    this_process || local::is_axon_port(port)
}

/// Link-local (with the cloud metadata address), unspecified, broadcast, and
/// the IPv6 metadata address of some clouds; IPv4-mapped IPv6 as its IPv4.
pub fn never_reached(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local() || v4.is_unspecified() || v4.is_broadcast(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return never_reached(IpAddr::V4(v4));
            }
            v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254]
        }
    }
}

/// Why a connection to `addr` (for `host`, as the caller named it) is
/// refused, if it is.
pub fn refused(host: &str, addr: SocketAddr) -> Option<String> {
    let ip = addr.ip();
    let rules = rules();
    let named = rules.names_address(ip);
    if never_reached(ip) && !named {
        return Some(format!(
            "{host} is {ip}, a link-local or cloud metadata address: never reached"
        ));
    }
    if private_denied() && is_private(ip) && !named {
        return Some(format!(
            "{host} is {ip}, a loopback or private address: never reached from a shared server ([network] allow_private)"
        ));
    }
    let loopback = ip.is_loopback()
        || matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()));
    if loopback && is_own_port(addr.port()) {
        return Some(format!(
            "{host}:{} is one of Axon's own endpoints: never reached",
            addr.port()
        ));
    }
    rules.refuses(host, Some(ip), Some(addr.port()))
}

/// Why `host:port` is refused, looked up when the decision needs the
/// host's addresses ([`needs_lookup`]): what [`refused_literal`] decides,
/// then every address the name resolves to. A name that does not resolve is
/// not refused here (the connection fails on its own).
pub async fn refused_destination(host: &str, port: u16) -> Option<String> {
    if let Some(why) = refused_literal(host, port) {
        return Some(why);
    }
    if !needs_lookup(port) {
        return None;
    }
    let addrs = tokio::net::lookup_host((host, port)).await.ok()?;
    addrs.into_iter().find_map(|addr| refused(host, addr))
}

/// Whether `host` names loopback without a lookup (`localhost`,
/// `*.localhost`, a loopback address).
pub fn names_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let lower = host.trim_end_matches('.').to_ascii_lowercase();
    lower == "localhost"
        || lower.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The refusal for a URL's host and port that can be decided without a
/// lookup: an IP literal, a loopback name on one of Axon's ports, and the
/// rules on names and ports.
pub fn refused_literal(host: &str, port: u16) -> Option<String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return refused(host, SocketAddr::new(ip, port));
    }
    if names_loopback(host) && is_own_port(port) {
        return Some(format!(
            "{host}:{port} is one of Axon's own endpoints: never reached"
        ));
    }
    let rules = rules();
    let loopback = IpAddr::from([127, 0, 0, 1]);
    if names_loopback(host) && private_denied() && !rules.names_address(loopback) {
        return Some(format!(
            "{host} is a loopback name: never reached from a shared server ([network] allow_private)"
        ));
    }
    rules.refuses(host, None, Some(port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_and_link_local_addresses_are_never_reached() {
        for ip in [
            "169.254.169.254",
            "169.254.1.1",
            "0.0.0.0",
            "255.255.255.255",
            "fe80::1",
            "::ffff:169.254.169.254",
            "fd00:ec2::254",
            "::",
        ] {
            assert!(never_reached(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["127.0.0.1", "10.0.0.1", "93.184.216.34", "::1"] {
            assert!(!never_reached(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn private_ranges_are_classified() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "::1",
            "fd12::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2001:db8::1",
            "8.8.8.8",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn own_ports_are_refused_on_loopback_only() {
        register_own_port(40_111);
        assert!(refused_literal("127.0.0.1", 40_111).is_some());
        assert!(refused_literal("[::1]", 40_111).is_some());
        assert!(refused_literal("LOCALHOST.", 40_111).is_some());
        assert!(refused_literal("api.localhost", 40_111).is_some());
        assert!(refused_literal("127.0.0.1", 40_112).is_none());
        assert!(refused_literal("10.1.2.3", 40_111).is_none());
        assert!(refused_literal("example.com", 40_111).is_none());
        assert!(refused("a", "[::ffff:127.0.0.1]:40111".parse().unwrap()).is_some());
        forget_own_port(40_111);
        assert!(refused_literal("127.0.0.1", 40_111).is_none());
    }
}
