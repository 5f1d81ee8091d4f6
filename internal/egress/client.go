package egress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// MaxRedirects bounds the redirects one call follows.
const MaxRedirects = 5

// Client returns an HTTP client held to the policy: every connection is checked against the
// address it dials, every redirect against the redirect rules (CheckRedirect). It ignores
// HTTP_PROXY and HTTPS_PROXY, since a proxy would resolve the names where the dial check cannot
// see the addresses.
func (p *Policy) Client(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = p.DialContext(&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second})
	return &http.Client{Timeout: timeout, Transport: t, CheckRedirect: p.CheckRedirect}
}

// DialContext wraps d so that each connection is refused unless the address it is about to
// dial — after DNS, so a name that resolves (or rebinds) to a refused address is caught — passes
// the policy. Host names on the allow list are dialled as they resolve. The policy's hook
// replaces any Control or ControlContext hook d has.
func (p *Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	guarded := *d
	guarded.ControlContext = nil
	guarded.Control = p.control
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(addr); err == nil && p.allow.hasHost(host) {
			return d.DialContext(ctx, network, addr)
		}
		return guarded.DialContext(ctx, network, addr)
	}
}

// control is the net.Dialer hook: it runs once per resolved address, before connect.
func (p *Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refusal(fmt.Sprintf("cannot read the dialled address %q: %v", address, err))
	}
	return p.CheckAddr(ap.Addr())
}

// CheckRedirect follows a redirect only on the same host and port (http may become https, never
// the other way) and only while the target passes CheckURL; the connection it opens is checked
// by the dialer too. Redirects to other hosts are refused: the request carries the provider's
// auth header, which would go with it, and vendor APIs answer their JSON where they are called.
func (p *Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return refusal(fmt.Sprintf("stopped after %d redirects", MaxRedirects))
	}
	from, to := via[0].URL, req.URL
	if !strings.EqualFold(from.Host, to.Host) {
		return refusal(fmt.Sprintf("redirect from %s to another host %s refused", from.Host, to.Host))
	}
	if from.Scheme == "https" && to.Scheme != "https" {
		return refusal(fmt.Sprintf("redirect from https to %s refused", to.Scheme))
	}
	return p.CheckURL(to.String())
}
