package egress

import "net/netip"

// Class says why an address is not a public one. The empty Class is a public address.
type Class string

// The classes of refused addresses.
const (
	Public      Class = ""
	Loopback    Class = "loopback"
	Unspecified Class = "unspecified"
	LinkLocal   Class = "link-local"
	Private     Class = "private"
	SharedCGNAT Class = "carrier-grade NAT"
	UniqueLocal Class = "unique-local"
	Multicast   Class = "multicast"
	Reserved    Class = "reserved"
)

// refusedRanges lists the address ranges a user-registered URL may not reach. Cloud metadata
// services live in link-local (169.254.169.254, fd00:ec2::254 is unique-local) and carrier-grade
// NAT space (Alibaba's 100.100.100.200), so the ranges cover them without naming each vendor.
var refusedRanges = []struct {
	prefix netip.Prefix
	class  Class
}{
	{netip.MustParsePrefix("0.0.0.0/8"), Unspecified}, // "this network": Linux connects 0.0.0.0 to the host itself
	{netip.MustParsePrefix("10.0.0.0/8"), Private},
	{netip.MustParsePrefix("100.64.0.0/10"), SharedCGNAT},
	{netip.MustParsePrefix("127.0.0.0/8"), Loopback},
	{netip.MustParsePrefix("169.254.0.0/16"), LinkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), Private},
	{netip.MustParsePrefix("192.0.0.0/24"), Reserved}, // IETF protocol assignments
	{netip.MustParsePrefix("192.168.0.0/16"), Private},
	{netip.MustParsePrefix("198.18.0.0/15"), Reserved}, // benchmarking networks
	{netip.MustParsePrefix("224.0.0.0/4"), Multicast},
	{netip.MustParsePrefix("240.0.0.0/4"), Reserved}, // includes 255.255.255.255
	{netip.MustParsePrefix("::/128"), Unspecified},
	{netip.MustParsePrefix("::1/128"), Loopback},
	{netip.MustParsePrefix("64:ff9b:1::/48"), Reserved}, // local-use NAT64
	{netip.MustParsePrefix("100::/64"), Reserved},       // discard-only
	{netip.MustParsePrefix("fc00::/7"), UniqueLocal},
	{netip.MustParsePrefix("fe80::/10"), LinkLocal},
	{netip.MustParsePrefix("fec0::/10"), Reserved}, // deprecated site-local
	{netip.MustParsePrefix("ff00::/8"), Multicast},
}

// Prefixes of IPv6 forms that carry an IPv4 address in them and may be routed to it. Each is
// judged by the IPv4 address it carries (::ffff:169.254.169.254 is 169.254.169.254).
var (
	ipv4Mapped     = netip.MustParsePrefix("::ffff:0:0/96") // ::ffff:a.b.c.d
	ipv4Compatible = netip.MustParsePrefix("::/96")         // deprecated ::a.b.c.d
	nat64          = netip.MustParsePrefix("64:ff9b::/96")  // well-known NAT64 prefix
	sixToFour      = netip.MustParsePrefix("2002::/16")     // 6to4: 2002:AABB:CCDD::/48
)

// Classify says which refused range ip is in, or Public. IPv6 forms that embed an IPv4
// address (mapped, compatible, NAT64, 6to4) are classified by the address they embed.
func Classify(ip netip.Addr) Class {
	ip = ip.WithZone("")
	if v4, ok := embeddedIPv4(ip); ok {
		ip = v4
	}
	if !ip.IsValid() {
		return Reserved // the zero Addr: nothing to connect to
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(ip) {
			return r.class
		}
	}
	return Public
}

// embeddedIPv4 returns the IPv4 address an IPv6 form carries, when it is one of the forms a
// router or the kernel may translate to that IPv4 address.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case ipv4Mapped.Contains(ip):
		return ip.Unmap(), true
	case ip == netip.IPv6Unspecified() || ip == netip.IPv6Loopback():
		return netip.Addr{}, false // their own classes, not 0.0.0.0 or 0.0.0.1
	case ipv4Compatible.Contains(ip), nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
