package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// AllowList is what an operator lets user-registered URLs reach although the policy refuses it:
// host names (matched exactly, case-insensitively; their DNS answers are trusted) and CIDR
// ranges or single addresses (matched against the address actually dialled). It is read from a
// comma-separated list such as `vendor.corp.example,10.20.0.0/16,fd12::7`.
type AllowList struct {
	hosts    []string
	prefixes []netip.Prefix
}

// ParseAllowList reads a comma-separated allow list; blank entries are ignored.
func ParseAllowList(s string) (AllowList, error) {
	var a AllowList
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		if err := a.add(entry); err != nil {
			return AllowList{}, err
		}
	}
	return a, nil
}

func (a *AllowList) add(entry string) error {
	if strings.Contains(entry, "/") {
		p, err := netip.ParsePrefix(entry)
		if err != nil {
			return fmt.Errorf("%q is not a CIDR range like 10.20.0.0/16", entry)
		}
		a.prefixes = append(a.prefixes, p.Masked())
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(entry, "[]")); err == nil {
		ip = ip.WithZone("").Unmap()
		a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
		return nil
	}
	host := normalHost(entry)
	if !validHostname(host) {
		return fmt.Errorf("%q is neither a host name, an IP address nor a CIDR range", entry)
	}
	if numeric(host) {
		return fmt.Errorf("%q: write an address as a dotted quad or IPv6 address", entry)
	}
	a.hosts = append(a.hosts, host)
	return nil
}

// UnmarshalText reads the allow list from its environment variable.
func (a *AllowList) UnmarshalText(text []byte) error {
	parsed, err := ParseAllowList(string(text))
	if err != nil {
		return err
	}
	*a = parsed
	return nil
}

// MarshalText writes the list as its environment variable reads it.
func (a AllowList) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// String is the list as it would be written in the environment.
func (a AllowList) String() string {
	out := slices.Clone(a.hosts)
	for _, p := range a.prefixes {
		out = append(out, p.String())
	}
	return strings.Join(out, ",")
}

func (a AllowList) hasHost(host string) bool {
	return slices.Contains(a.hosts, normalHost(host))
}

func (a AllowList) hasAddr(ip netip.Addr) bool {
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// normalHost is a host name as DNS compares it: lower case, without the root's trailing dot.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// validHostname reports whether h is made of DNS labels (letters, digits, '-' and '_', as
// internal names sometimes use).
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
