// Package egress is the outbound address policy for URLs that users register and taskloom then
// calls on their behalf (a provider's base_url and health_url, a function's invoke_url): without
// it, a registration pointing at 169.254.169.254 or 127.0.0.1:8080/internal/config would make
// the worker fetch the cloud metadata service or the API's own admin routes with the provider's
// credentials and hand the answer back in a task's output.
//
// Only http and https are allowed, and no address in a loopback, unspecified, link-local,
// private, carrier-grade NAT, unique-local, multicast or reserved range, in any spelling
// (IPv4-mapped IPv6, numeric forms such as 2130706433 or 0x7f.1, cloud metadata host names).
// A URL is checked twice: when it is registered (CheckURL, for what the URL itself shows) and
// when the worker connects (Dialer, against the address actually dialled, so a name that
// resolves to a refused address, or starts to later, is refused too). An operator allows an
// internal vendor explicitly with an AllowList; dev mode allows loopback for its local fakes.
package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Policy decides which outbound addresses user-registered URLs may reach.
type Policy struct {
	allow         AllowList
	allowLoopback bool
}

// New returns the policy that refuses every non-public address except those in allow, and the
// loopback range too when allowLoopback (dev mode, whose fakes listen on 127.0.0.1).
func New(allow AllowList, allowLoopback bool) *Policy {
	return &Policy{allow: allow, allowLoopback: allowLoopback}
}

// ErrRefused matches (errors.Is) every refusal of the policy: at registration, when dialling and
// on a redirect. A refused call cannot succeed by retrying.
var ErrRefused = errors.New("refused by the outbound address policy")

// refusal is a refusal that is not about an address range: a scheme, a numeric host, a redirect.
type refusal string

func (r refusal) Error() string        { return string(r) }
func (r refusal) Is(target error) bool { return target == ErrRefused }

// Refusal is a refusal of the policy (it matches ErrRefused) for a reason of the caller's, such
// as a redirect the HTTP client will not follow.
func Refusal(reason string) error { return refusal(reason) }

// AllowsHost reports whether host is on the operator's allow list by name, whose DNS is trusted.
func (p *Policy) AllowsHost(host string) bool { return p.allow.hasHost(host) }

// RefusedError is an address in a refused range.
type RefusedError struct {
	// Host is the host as the URL wrote it, or the address dialled.
	Host string
	// Addr is the address Host stands for, when it differs (a numeric form or a known name).
	Addr string
	// Class is the range the address is in.
	Class Class
}

func (e *RefusedError) Error() string {
	what := e.Host
	if e.Addr != "" && e.Addr != e.Host {
		what += " (" + e.Addr + ")"
	}
	return fmt.Sprintf("%s: %s addresses are refused for outbound calls (PIPELINE_ALLOWED_HOSTS can allow one)", what, e.Class)
}

// Is makes a RefusedError match ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// CheckURL checks a URL at registration: its scheme, and its host when the URL alone decides
// where it goes (an IP address, a numeric form, a well-known internal name). Other names are
// checked when the worker connects, against what they resolve to then.
func (p *Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return refusal("not a URL: " + err.Error())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return refusal(fmt.Sprintf("scheme %q is not allowed (only http and https)", u.Scheme))
	}
	if u.Hostname() == "" {
		return refusal(fmt.Sprintf("%q has no host", raw))
	}
	return p.CheckHost(u.Hostname())
}

// CheckHost checks a URL's host (without port or brackets) as far as it can be judged without
// DNS.
func (p *Policy) CheckHost(host string) error {
	h := normalHost(host)
	if p.allow.hasHost(h) {
		return nil
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return p.check(host, ip)
	}
	if !ascii(h) {
		// Resolvers differ on Unicode names (IDNA maps ①②⑦ to 127); punycode is unambiguous.
		return refusal(fmt.Sprintf("host %q is not ASCII; write an internationalised name in punycode (xn--)", host))
	}
	if numeric(h) {
		// 2130706433, 0x7f.1, 127.1 and 0177.0.0.1 are all 127.0.0.1 to inet_aton (the C
		// resolver) but a DNS name to Go's: refuse them rather than guess which one dials.
		return refusal(fmt.Sprintf("%s is a numeric host that is not a dotted-quad IPv4 address; write the address in full", host))
	}
	if ip, ok := knownName(h); ok {
		return p.check(host, ip)
	}
	return nil
}

// CheckAddr checks an address about to be dialled.
func (p *Policy) CheckAddr(ip netip.Addr) error {
	return p.check(ip.String(), ip)
}

func (p *Policy) check(host string, ip netip.Addr) error {
	if p.allowed(ip) {
		return nil
	}
	class := Classify(ip)
	if class == Public || class == Loopback && p.allowLoopback {
		return nil
	}
	if v4, ok := embeddedIPv4(ip.WithZone("")); ok {
		ip = v4
	}
	return &RefusedError{Host: host, Addr: ip.String(), Class: class}
}

// allowed reports whether the allow list names ip, in its own or its embedded IPv4 form.
func (p *Policy) allowed(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if p.allow.hasAddr(ip) {
		return true
	}
	v4, ok := embeddedIPv4(ip)
	return ok && p.allow.hasAddr(v4)
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// numeric reports whether h ends in a number (WHATWG URL's test for an IPv4 host): its last
// label is decimal digits or 0x-prefixed hex. No DNS name has such a top-level label, so such a
// host is meant as an address.
func numeric(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// knownNames are names that resolve to refused addresses on every host or cloud, whatever DNS
// says: the loopback names and the cloud metadata services.
var knownNames = map[string]netip.Addr{
	"localhost":                  netip.MustParseAddr("127.0.0.1"),
	"localhost.localdomain":      netip.MustParseAddr("127.0.0.1"),
	"ip6-localhost":              netip.IPv6Loopback(),
	"ip6-loopback":               netip.IPv6Loopback(),
	"metadata":                   netip.MustParseAddr("169.254.169.254"),
	"metadata.google.internal":   netip.MustParseAddr("169.254.169.254"),
	"metadata.goog":              netip.MustParseAddr("169.254.169.254"),
	"instance-data":              netip.MustParseAddr("169.254.169.254"),
	"instance-data.ec2.internal": netip.MustParseAddr("169.254.169.254"),
}

// knownName returns the address a well-known internal name stands for; any *.localhost name is
// loopback (RFC 6761).
func knownName(h string) (netip.Addr, bool) {
	if ip, ok := knownNames[h]; ok {
		return ip, true
	}
	if strings.HasSuffix(h, ".localhost") {
		return knownNames["localhost"], true
	}
	return netip.Addr{}, false
}
