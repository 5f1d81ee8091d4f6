package api

import (
	"net"
	"net/http/httptest"
	"testing"
)

func TestClientIPTrustsForwardedForOnlyFromListedProxies(t *testing.T) {
	_, proxies, _ := net.ParseCIDR("10.1.0.0/16")
	for _, c := range []struct {
		name    string
		trusted []*net.IPNet
		peer    string
		xff     string
		want    string
	}{
		{"no proxies listed: the peer, whatever it forwards", nil, "203.0.113.5:4000", "198.51.100.1", "203.0.113.5"},
		{"no proxies listed: a loopback peer is no proxy either", nil, "127.0.0.1:4000", "198.51.100.1", "127.0.0.1"},
		{"a listed proxy names the client", []*net.IPNet{proxies}, "10.1.2.3:4000", "198.51.100.1", "198.51.100.1"},
		{"a client's own X-Forwarded-For entries before the proxy's are not believed", []*net.IPNet{proxies},
			"10.1.2.3:4000", "192.0.2.77, 198.51.100.1", "198.51.100.1"},
		{"a private peer outside the list is the client", []*net.IPNet{proxies}, "192.168.1.9:4000", "198.51.100.1", "192.168.1.9"},
		{"a loopback peer outside the list is the client", []*net.IPNet{proxies}, "127.0.0.1:4000", "198.51.100.1", "127.0.0.1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/ui/login", nil)
			req.RemoteAddr = c.peer
			req.Header.Set("X-Forwarded-For", c.xff)
			if got := clientIP(c.trusted)(req); got != c.want {
				t.Errorf("client %s, want %s", got, c.want)
			}
		})
	}
}
