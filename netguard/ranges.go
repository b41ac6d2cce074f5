package netguard

import "net/netip"

// span is one range of addresses that is not reachable from here, with the
// words a refusal uses for it.
type span struct {
	prefix netip.Prefix
	what   string
}

// internal4 are the IPv4 ranges refused. 240.0.0.0/4 holds the limited
// broadcast address 255.255.255.255 and the rest of the reserved block.
var internal4 = [...]span{
	{netip.MustParsePrefix("0.0.0.0/8"), "a this-network address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address"},
}

// internal6 are the IPv6 ranges refused outright. The forms that carry an
// IPv4 address are judged by that address (see embedded4), except the
// deprecated IPv4-compatible block ::/96, which is refused whole: nothing
// legitimate uses it, and it holds :: and ::1.
var internal6 = [...]span{
	{netip.MustParsePrefix("::/96"), "an unspecified, loopback or IPv4-compatible address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("fc00::/7"), "a unique local address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// Prefixes of IPv6 forms that carry an IPv4 address.
var (
	siit   = netip.MustParsePrefix("::ffff:0:0:0/96") // ::ffff:0:a.b.c.d
	nat64  = netip.MustParsePrefix("64:ff9b::/96")    // 64:ff9b::a.b.c.d
	sixTo4 = netip.MustParsePrefix("2002::/16")       // 2002:aabb:ccdd::
	teredo = netip.MustParsePrefix("2001::/32")       // server v4 in bits 32-63, client v4 inverted in bits 96-127
)

// Internal reports whether ip is an address a fetch must not reach:
// loopback, private, unique-local, link-local, carrier-grade NAT, this
// network, multicast, broadcast and reserved, benchmarking and unspecified
// addresses, and the IPv6 forms that carry such an IPv4 address
// (IPv4-mapped, IPv4-compatible, SIIT, NAT64, 6to4, Teredo). The zero Addr
// is internal: what cannot be judged is refused.
func Internal(ip netip.Addr) bool {
	_, bad := classify(ip)
	return bad
}

// classify returns the words for the range ip is in, and whether it is
// internal.
func classify(ip netip.Addr) (string, bool) {
	if !ip.IsValid() {
		return "not a valid address", true
	}
	ip = ip.Unmap()
	if ip.Is4() {
		for i := range internal4 {
			if internal4[i].prefix.Contains(ip) {
				return internal4[i].what, true
			}
		}
		return "", false
	}
	ip = ip.WithZone("")
	for i := range internal6 {
		if internal6[i].prefix.Contains(ip) {
			return internal6[i].what, true
		}
	}
	v4s, n := embedded4(ip)
	for _, v4 := range v4s[:n] {
		if what, bad := classify(v4); bad {
			return what + " inside an IPv6 address", true
		}
	}
	return "", false
}

// embedded4 returns the IPv4 addresses (n of them) carried by an IPv6
// address of one of the translation forms.
func embedded4(ip netip.Addr) (v4s [2]netip.Addr, n int) {
	b := ip.As16()
	switch {
	case siit.Contains(ip), nat64.Contains(ip):
		v4s[0] = netip.AddrFrom4([4]byte(b[12:16]))
		return v4s, 1
	case sixTo4.Contains(ip):
		v4s[0] = netip.AddrFrom4([4]byte(b[2:6]))
		return v4s, 1
	case teredo.Contains(ip):
		v4s[0] = netip.AddrFrom4([4]byte(b[4:8]))
		v4s[1] = netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return v4s, 2
	}
	return v4s, 0
}
