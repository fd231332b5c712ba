package libbox

// Where an allowed name may lead: the relay resolves names on the host's
// side, at connect time, and refuses addresses that would turn an allowed
// name into a way into the host or its network, unless the policy allows
// private targets.

import (
	"net/netip"
)

// refusedRanges are the non-public ranges netip's predicates do not cover.
var refusedRanges = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (CGNAT; some clouds' metadata, 100.100.100.200)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds any IPv4 address
	netip.MustParsePrefix("2001::/32"),       // Teredo: likewise
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: likewise
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated): likewise
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT): likewise
	netip.MustParsePrefix("::/128"),          // unspecified
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, metadata services
	netip.MustParsePrefix("fd00:ec2::/32"),   // AWS's IPv6 metadata (inside fc00::/7 anyway)
	netip.MustParsePrefix("255.255.255.255/32"),
}

// targetRefusal says why a is not a target an allowed name may lead to
// ("" when it may): loopback, private, link-local and the other
// non-public ranges, and any address of the host itself (hostAddrs).
// With allowPrivate only what can never be dialled is refused.
func targetRefusal(a netip.Addr, allowPrivate bool, hostAddrs []netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	}
	if allowPrivate {
		return ""
	}
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		if a == netip.AddrFrom4([4]byte{169, 254, 169, 254}) {
			return "the cloud metadata address"
		}
		return "a link-local address"
	}
	for _, p := range refusedRanges {
		if p.Contains(a) {
			if a.Is4() && p.Bits() == 10 {
				return "a shared (carrier-grade NAT) address"
			}
			return "a reserved address"
		}
	}
	for _, h := range hostAddrs {
		if h.Unmap() == a {
			return "an address of this host"
		}
	}
	return ""
}
