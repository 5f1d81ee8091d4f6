// Package egresshttp holds an HTTP client to the outbound policy of package egress: the policy
// itself stays free of net/http so that the configuration, which workflows read, opens nothing.
package egresshttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/taskloom/taskloom/internal/egress"
)

// MaxRedirects bounds the redirects one call follows.
const MaxRedirects = 5

// Client returns an HTTP client held to policy p: every connection is checked against the
// address it dials, every redirect against the redirect rules (CheckRedirect). It ignores
// HTTP_PROXY and HTTPS_PROXY, since a proxy would resolve the names where the dial check cannot
// see the addresses.
func Client(p *egress.Policy, timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = DialContext(p, &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	return &http.Client{Timeout: timeout, Transport: t, CheckRedirect: CheckRedirect(p)}
}

// DialContext wraps d so that each connection is refused unless the address it is about to
// dial — after DNS, so a name that resolves (or rebinds) to a refused address is caught — passes
// the policy. Host names on the allow list are dialled as they resolve. The policy's hook
// replaces any Control or ControlContext hook d has.
func DialContext(p *egress.Policy, d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	guarded := *d
	guarded.ControlContext = nil
	guarded.Control = control(p)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil && p.AllowsHost(host) {
			return d.DialContext(ctx, network, addr)
		}
		return guarded.DialContext(ctx, network, addr)
	}
}

// control is the net.Dialer hook: it runs once per resolved address, before connect.
func control(p *egress.Policy) func(_, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return egress.Refusal(fmt.Sprintf("cannot read the dialled address %q: %v", address, err))
		}
		return p.CheckAddr(ap.Addr())
	}
}

// CheckRedirect returns the redirect rule: it follows a redirect only on the same host and port (http may become https, never
// the other way) and only while the target passes CheckURL; the connection it opens is checked
// by the dialer too. Redirects to other hosts are refused: the request carries the provider's
// auth header, which would go with it, and vendor APIs answer their JSON where they are called.
func CheckRedirect(p *egress.Policy) func(req *http.Request, via []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= MaxRedirects {
			return egress.Refusal(fmt.Sprintf("stopped after %d redirects", MaxRedirects))
		}
		from, to := via[0].URL, req.URL
		if !strings.EqualFold(from.Host, to.Host) {
			return egress.Refusal(fmt.Sprintf("redirect from %s to another host %s refused", from.Host, to.Host))
		}
		if from.Scheme == "https" && to.Scheme != "https" {
			return egress.Refusal(fmt.Sprintf("redirect from https to %s refused", to.Scheme))
		}
		return p.CheckURL(to.String())
	}
}
