package egresshttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/egress"
)

// internalServer stands for a service on the worker's host (the API's /internal/config): it
// counts the requests that reach it.
func internalServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"secret":"s3cret"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// serverOn starts h on addr (e.g. 127.0.0.2:0, another loopback address on Linux), standing for
// a vendor the operator allow-listed.
func serverOn(t *testing.T, addr string, h http.Handler) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// A name the registration check cannot judge (here localhost, as a rebinding name would resolve
// later) is refused when the worker connects: the dial hook sees 127.0.0.1 and nothing is sent.
func TestDialRefusesNameResolvingToRefusedAddress(t *testing.T) {
	srv, hits := internalServer(t)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	c := Client(egress.New(egress.AllowList{}, false), 5*time.Second)
	for _, u := range []string{"http://localhost:" + port + "/internal/config", srv.URL + "/internal/config"} {
		resp, err := c.Get(u)
		if err == nil {
			_ = resp.Body.Close()
		}
		var refused *egress.RefusedError
		if !errors.As(err, &refused) || refused.Class != egress.Loopback || !errors.Is(err, egress.ErrRefused) {
			t.Errorf("GET %s: %v, want a loopback refusal", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the internal server got %d requests", n)
	}
	// The hook sees each resolved address, whatever name led to it.
	d := DialContext(egress.New(egress.AllowList{}, false), &net.Dialer{})
	if _, err := d(context.Background(), "tcp", srv.Listener.Addr().String()); !errors.Is(err, egress.ErrRefused) {
		t.Fatalf("dial %s: %v", srv.Listener.Addr(), err)
	}
}

// An allow-listed vendor redirecting to the worker's host is refused at the redirect, whether
// it names another host or an address: the internal server never sees the request.
func TestRedirectToRefusedAddressIsRefused(t *testing.T) {
	internal, hits := internalServer(t)
	vendor := serverOn(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/ok":
			_, _ = w.Write([]byte(`{}`))
		case "/metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			http.Redirect(w, r, internal.URL+"/internal/config", http.StatusTemporaryRedirect)
		}
	}))
	c := Client(egress.New(mustAllow(t, "127.0.0.2/32"), false), 5*time.Second)
	for _, path := range []string{"/steal", "/metadata", "/loop"} {
		resp, err := c.Get(vendor.URL + path)
		if err == nil {
			_ = resp.Body.Close()
		}
		if !errors.Is(err, egress.ErrRefused) {
			t.Errorf("GET %s: %v, want a refused redirect", path, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the internal server got %d requests", n)
	}
	resp, err := c.Get(vendor.URL + "/moved")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("same-host redirect: %v %v", resp, err)
	}
	_ = resp.Body.Close()
}

// An address range or a host name on the allow list is reachable in prod; the rest is not.
func TestAllowListedVendorIsReachable(t *testing.T) {
	vendor := serverOn(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	named, hits := internalServer(t)
	byName := "http://localhost:" + named.URL[strings.LastIndexByte(named.URL, ':')+1:]
	for allow, target := range map[string]string{"127.0.0.0/30": vendor.URL, "localhost": byName} {
		p := egress.New(mustAllow(t, allow), false)
		if err := p.CheckURL(target); err != nil {
			t.Fatalf("allow %s: registration of %s refused: %v", allow, target, err)
		}
		resp, err := Client(p, 5*time.Second).Get(target)
		if err != nil {
			t.Fatalf("allow %s: GET %s: %v", allow, target, err)
		}
		_ = resp.Body.Close()
	}
	if hits.Load() != 1 {
		t.Fatal("the allow-listed name was not reached")
	}
	if _, err := Client(egress.New(mustAllow(t, "127.0.0.4/30"), false), 5*time.Second).Get(vendor.URL); !errors.Is(err, egress.ErrRefused) {
		t.Fatalf("127.0.0.2 outside 127.0.0.4/30 was reached: %v", err)
	}
}

// Dev mode reaches its loopback fakes and nothing else internal.
func TestDevReachesLoopbackFakes(t *testing.T) {
	srv, hits := internalServer(t)
	resp, err := Client(egress.New(egress.AllowList{}, true), 5*time.Second).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatal("the fake got no request")
	}
	d := DialContext(egress.New(egress.AllowList{}, true), &net.Dialer{Timeout: time.Second})
	if _, err := d(context.Background(), "tcp", "10.255.255.1:80"); !errors.Is(err, egress.ErrRefused) {
		t.Fatalf("dev dialled a private address: %v", err)
	}
}

func mustAllow(t testing.TB, s string) egress.AllowList {
	t.Helper()
	a, err := egress.ParseAllowList(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
