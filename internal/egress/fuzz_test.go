package egress

import (
	"net/netip"
	"net/url"
	"testing"
)

// FuzzCheckURL feeds arbitrary URLs to the registration check (seed corpus in
// testdata/fuzz/FuzzCheckURL): it must never panic, prod must never accept what dev refuses,
// and whatever either accepts must be http(s) with a host that, when it is an address, is in no
// range the mode refuses.
func FuzzCheckURL(f *testing.F) {
	for _, u := range append(append(append(internalURLs, loopbackURLs...), numericURLs...), publicURLs...) {
		f.Add(u)
	}
	prod, dev := New(AllowList{}, false), New(AllowList{}, true)
	f.Fuzz(func(t *testing.T, raw string) {
		prodErr, devErr := prod.CheckURL(raw), dev.CheckURL(raw)
		if prodErr == nil && devErr != nil {
			t.Fatalf("prod accepted %q, dev refused it: %v", raw, devErr)
		}
		if devErr != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			t.Fatalf("accepted %q: scheme %q, host %q, parse error %v", raw, u.Scheme, u.Hostname(), err)
		}
		host := normalHost(u.Hostname())
		if numeric(host) {
			if _, err := netip.ParseAddr(host); err != nil {
				t.Fatalf("accepted the non-canonical numeric host %q", host)
			}
		}
		ip, err := netip.ParseAddr(host)
		if err != nil {
			return
		}
		if c := Classify(ip); prodErr == nil && c != Public || c != Public && c != Loopback {
			t.Fatalf("accepted %q whose address %s is %s (prod error %v)", raw, ip, c, prodErr)
		}
	})
}
