package api

import (
	"net"

	"github.com/labstack/echo/v4"
)

// clientIP is how the API tells which address a request comes from (echo.Context.RealIP: the
// sign-in throttle, logs). X-Forwarded-For is anyone's to write, so it names the client only when
// the connection comes from a proxy the operator listed in TRUSTED_PROXIES; with none listed, the
// client is the connection's peer. Echo's own defaults would trust loopback, link-local and
// private peers as proxies, so they are turned off: only the listed networks count.
func clientIP(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
