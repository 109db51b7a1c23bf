//! Which addresses a fetch may reach.
//!
//! A URL from a client is untrusted: without this, "crawl
//! `http://169.254.169.254/latest/meta-data/`" would read the cloud
//! metadata service through docshelf, and `http://127.0.0.1:…` the
//! server's own admin ports. So every address a fetch connects to is
//! checked: host names after DNS resolution (by [`GuardedResolver`], the
//! resolver the HTTP client connects through, so a name cannot resolve one
//! way when checked and another when used), and literal IPs in the URL, on
//! the first request and on every redirect.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether fetches may reach private networks: all of them
/// (`--allow-private-urls`), or only these addresses (`--allow-address`,
/// for one intranet docs server without opening the rest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    pub allow_private: bool,
    pub allowed: Vec<IpAddr>,
}

/// Why an address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{address} is {what}: docshelf does not fetch from the server's own network \
     (allow it for intranet docs with --allow-address {address}, or --allow-private-urls, on `docshelf serve` or `docshelf ingest`)"
)]
pub struct Refused {
    pub address: IpAddr,
    pub what: &'static str,
}

impl AddressPolicy {
    /// `Ok` if a fetch may connect to `ip`.
    pub fn check(&self, ip: IpAddr) -> Result<(), Refused> {
        if self.allow_private || self.allowed.contains(&ip) {
            return Ok(());
        }
        match special(ip) {
            Some(what) => Err(Refused { address: ip, what }),
            None => Ok(()),
        }
    }
}

/// What kind of non-public address `ip` is, if it is one.
pub fn special(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_loopback() => "a loopback address",
        _ if ip.is_unspecified() || a == 0 => "an unspecified address",
        _ if ip.is_private() => "a private address",
        (169, 254, _) => "a link-local address (where cloud metadata services answer)",
        (100, 64..=127, _) => "a shared (carrier-grade NAT) address",
        (192, 0, 0) => "an IETF protocol address",
        // TEST-NET-1, -2 and -3 (RFC 5737): no public host answers there,
        // so a URL naming one reaches whatever the server's network put there.
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        // The 6to4 relay anycast (RFC 7526), deprecated.
        (192, 88, 99) => "a reserved (6to4 relay) address",
        (198, 18..=19, _) => "a benchmarking address",
        _ if ip.is_multicast() => "a multicast address",
        _ if ip.is_broadcast() || a >= 240 => "a reserved address",
        _ => return None,
    })
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    if ip.is_unspecified() {
        return Some("an unspecified address");
    }
    // An IPv4 address wrapped in IPv6 is that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return special_v4(v4);
    }
    // Transition forms route to the IPv4 address they embed: a relay or
    // translator on the server's network would carry the request there.
    if let Some(what) = embedded_v4(ip).into_iter().find_map(special_v4) {
        return Some(what);
    }
    let segments = ip.segments();
    Some(match segments {
        [s, ..] if s & 0xfe00 == 0xfc00 => "a private (unique local) address",
        [s, ..] if s & 0xffc0 == 0xfe80 => "a link-local address",
        // Deprecated site-local (fec0::/10), still private where honoured.
        [s, ..] if s & 0xffc0 == 0xfec0 => "a site-local address",
        [s, ..] if s & 0xff00 == 0xff00 => "a multicast address",
        // The discard prefix (100::/64).
        [0x100, 0, 0, 0, ..] => "a discard address",
        // The IPv4-compatible form (::a.b.c.d), deprecated but routable
        // to the IPv4 address on some stacks.
        [0, 0, 0, 0, 0, 0, ..] => "an IPv4-compatible address",
        // SIIT's IPv4-translated form (::ffff:0:a.b.c.d), never a public
        // host's address.
        [0, 0, 0, 0, 0xffff, 0, ..] => "an IPv4-translated address",
        // 2001:db8::/32 and 3fff::/20 (RFC 3849, RFC 9637).
        [0x2001, 0xdb8, ..] => "a documentation address",
        [0x3fff, s, ..] if s & 0xf000 == 0 => "a documentation address",
        // 2001:2::/48 (RFC 5180).
        [0x2001, 2, 0, ..] => "a benchmarking address",
        // ORCHID and ORCHIDv2 (2001:10::/28, 2001:20::/28): identifiers,
        // not locators.
        [0x2001, s, ..] if s & 0xfff0 == 0x10 || s & 0xfff0 == 0x20 => {
            "a reserved (ORCHID) address"
        }
        // SRv6 segment identifiers (5f00::/16, RFC 9602): a provider's
        // own network.
        [0x5f00, ..] => "a reserved (SRv6) address",
        _ => return None,
    })
}

/// The IPv4 addresses an IPv6 address carries to by a transition
/// mechanism: the IPv4-compatible (::a.b.c.d) and IPv4-translated
/// (::ffff:0:a.b.c.d) forms, NAT64 (64:ff9b::/96 and the local-use
/// 64:ff9b:1::/48), 6to4 (2002::/16, the address in bits 16–47) and Teredo
/// (2001::/32: its server in bits 32–63, its client inverted in the last
/// 32 bits). The mapped form (::ffff:a.b.c.d) is read by
/// [`Ipv6Addr::to_ipv4_mapped`] before this.
fn embedded_v4(ip: Ipv6Addr) -> Vec<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0, hi, lo] | [0, 0, 0, 0, 0xffff, 0, hi, lo] => vec![v4(hi, lo)],
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => vec![v4(hi, lo)],
        [0x64, 0xff9b, 1, ..] => vec![v4(s[6], s[7])],
        [0x2002, hi, lo, ..] => vec![v4(hi, lo)],
        [0x2001, 0, server_hi, server_lo, .., client_hi, client_lo] => {
            vec![v4(server_hi, server_lo), v4(!client_hi, !client_lo)]
        }
        _ => Vec::new(),
    }
}

/// The HTTP client's resolver: the system's, with every address the
/// policy refuses taken out. A name that resolves only to refused
/// addresses fails with [`Refused`] as its error.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    pub policy: AddressPolicy,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut refused = None;
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| match policy.check(addr.ip()) {
                    Ok(()) => true,
                    Err(why) => {
                        refused.get_or_insert(why);
                        false
                    }
                })
                .collect();
            match (allowed.is_empty(), refused) {
                (true, Some(why)) => Err(Box::new(why) as Box<dyn std::error::Error + Send + Sync>),
                _ => Ok(Box::new(allowed.into_iter()) as Addrs),
            }
        })
    }
}

impl GuardedResolver {
    pub fn shared(policy: AddressPolicy) -> Arc<Self> {
        Arc::new(Self { policy })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(s: &str) -> bool {
        AddressPolicy::default().check(s.parse().unwrap()).is_err()
    }

    #[test]
    fn the_servers_own_networks_are_refused() {
        for ip in [
            "127.0.0.1",
            "127.8.9.1",
            "10.0.0.7",
            "172.16.4.4",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.100.100.200",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "::7f00:1",
            "224.0.0.1",
            "255.255.255.255",
            // 6to4 of 127.0.0.1, 10.0.0.1, 169.254.169.254, 192.168.0.1.
            "2002:7f00:1::",
            "2002:7f00:0001:0:0:0:0:1",
            "2002:a00:1::1",
            "2002:a9fe:a9fe::",
            "2002:c0a8:1::",
            // Teredo: a client of 127.0.0.1 (inverted: 80ff:fffe), and a
            // server of 10.0.0.1 with a public client.
            "2001:0:5ef5:79fb:0:0:80ff:fffe",
            "2001:0:a00:1:0:0:f7f7:f7f7",
            // Local-use NAT64 of 127.0.0.1; site-local; discard.
            "64:ff9b:1::7f00:1",
            "fec0::1",
            "100::1",
        ] {
            assert!(refused(ip), "{ip} should be refused");
        }
    }

    /// What `special` calls `ip`, for the tests' messages.
    fn what(ip: &str) -> Option<&'static str> {
        special(ip.parse().unwrap())
    }

    #[test]
    fn documentation_and_reserved_ipv4_ranges_are_refused() {
        for (ip, kind) in [
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.200", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.254", "benchmarking"),
            ("192.88.99.1", "6to4 relay"),
            ("192.0.0.8", "IETF protocol"),
            ("0.1.2.3", "unspecified"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "reserved"),
            ("239.255.255.250", "multicast"),
        ] {
            let what = what(ip).unwrap_or_else(|| panic!("{ip} should be refused"));
            assert!(what.contains(kind), "{ip}: {what}");
        }
        // Their neighbours are public.
        for ip in [
            "192.0.3.1",
            "198.51.101.1",
            "203.0.114.1",
            "198.20.0.1",
            "192.88.98.1",
        ] {
            assert_eq!(what(ip), None, "{ip} should pass");
        }
    }

    #[test]
    fn documentation_and_reserved_ipv6_ranges_are_refused() {
        for (ip, kind) in [
            ("2001:db8::1", "documentation"),
            ("2001:db8:ffff::7", "documentation"),
            ("3fff::1", "documentation"),
            ("3fff:fff:ffff::1", "documentation"),
            ("2001:2::1", "benchmarking"),
            ("2001:10::1", "ORCHID"),
            ("2001:2f::1", "ORCHID"),
            ("5f00::1", "SRv6"),
            ("100::1", "discard"),
            ("fd12:3456::1", "unique local"),
            ("fc00::1", "unique local"),
            ("ff02::1", "multicast"),
            ("fe80::1", "link-local"),
            ("::1", "loopback"),
            ("::", "unspecified"),
        ] {
            let what = what(ip).unwrap_or_else(|| panic!("{ip} should be refused"));
            assert!(what.contains(kind), "{ip}: {what}");
        }
        for ip in [
            "2001:db9::1",
            "3fff:1000::1",
            "2001:4860:4860::8888",
            "5f01::1",
        ] {
            assert_eq!(what(ip), None, "{ip} should pass");
        }
    }

    /// 192.0.2.1 (TEST-NET-1) and 127.0.0.1 in every IPv6 form that carries
    /// an IPv4 address: each is refused as the address it embeds.
    #[test]
    fn every_ipv6_embedding_of_a_refused_ipv4_is_refused() {
        for (ip, kind) in [
            // Mapped, ::ffff:a.b.c.d.
            ("::ffff:192.0.2.1", "documentation"),
            ("::ffff:7f00:1", "loopback"),
            // IPv4-compatible, ::a.b.c.d.
            ("::192.0.2.1", "documentation"),
            ("::127.0.0.1", "loopback"),
            // SIIT's IPv4-translated, ::ffff:0:a.b.c.d.
            ("::ffff:0:7f00:1", "loopback"),
            ("::ffff:0:192.0.2.1", "documentation"),
            // NAT64, well-known and local-use prefixes.
            ("64:ff9b::192.0.2.1", "documentation"),
            ("64:ff9b::7f00:1", "loopback"),
            ("64:ff9b:1::c000:201", "documentation"),
            ("64:ff9b:1:abcd::7f00:1", "loopback"),
            // 6to4: the address in bits 16–47.
            ("2002:c000:201::1", "documentation"),
            ("2002:7f00:1::", "loopback"),
            // Teredo: the server in bits 32–63, the client inverted.
            ("2001:0:c000:201::1", "documentation"),
            ("2001:0:5ef5:79fb:0:0:3fff:fdfe", "documentation"),
            ("2001:0:5ef5:79fb:0:0:80ff:fffe", "loopback"),
        ] {
            let what = what(ip).unwrap_or_else(|| panic!("{ip} should be refused"));
            assert!(what.contains(kind), "{ip}: {what}");
        }
    }

    #[test]
    fn ipv6_embeddings_of_public_ipv4_pass_where_the_form_is_routable() {
        for ip in [
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "64:ff9b:1::808:808",
            "2002:808:808::1",
            "2001:0:5ef5:79fb:0:0:f7f7:f7f7",
        ] {
            assert_eq!(what(ip), None, "{ip} should pass");
        }
        // The deprecated forms are never a public host's address.
        assert!(what("::8.8.8.8").is_some());
        assert!(what("::ffff:0:808:808").is_some());
    }

    #[test]
    fn public_addresses_pass_and_the_flag_lifts_the_rule() {
        for ip in [
            "93.184.216.34",
            "151.101.1.69",
            "2606:4700::6810:85e5",
            "8.8.8.8",
            // 6to4 and Teredo of public addresses.
            "2002:5db8:d822::1",
            "2001:0:5ef5:79fb:0:0:a247:2777",
        ] {
            assert!(!refused(ip), "{ip} should pass");
        }
        let open = AddressPolicy {
            allow_private: true,
            ..AddressPolicy::default()
        };
        assert!(open.check("127.0.0.1".parse().unwrap()).is_ok());
        let one = AddressPolicy {
            allowed: vec!["10.0.0.5".parse().unwrap()],
            ..AddressPolicy::default()
        };
        assert!(one.check("10.0.0.5".parse().unwrap()).is_ok());
        assert!(one.check("10.0.0.6".parse().unwrap()).is_err());
    }

    #[test]
    fn the_refusal_says_what_and_how_to_lift_it() {
        let err = AddressPolicy::default()
            .check("169.254.169.254".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("169.254.169.254") && err.contains("link-local"),
            "{err}"
        );
        assert!(err.contains("--allow-private-urls"), "{err}");
    }
}
