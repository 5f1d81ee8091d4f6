package api

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/config"
)

// serveWith runs httpServer with cfg over h on a local port and returns its address.
func serveWith(t *testing.T, cfg config.API, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(cfg, h)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

var shortTimeouts = config.API{ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond}

// closedWithin asserts the server closes conn within d (a read ends in EOF or a reset).
func closedWithin(t *testing.T, conn net.Conn, d time.Duration) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection was still open after %v", d)
	}
}

func TestServerCutsOffATricklingBody(t *testing.T) {
	addr := serveWith(t, shortTimeouts, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
	}))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
	go func() { // one byte every 100 ms: the body would take 100 s
		for range 1000 {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	closedWithin(t, conn, 3*time.Second)
}

func TestServerClosesAnIdleConnection(t *testing.T) {
	addr := serveWith(t, shortTimeouts, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	closedWithin(t, conn, 3*time.Second)
}

func TestServerDropsAnAnswerPastTheWriteTimeout(t *testing.T) {
	addr := serveWith(t, shortTimeouts, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		_, _ = io.WriteString(w, "late")
	}))
	resp, err := http.Get("http://" + addr + "/")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "late") {
			t.Fatal("an answer written after the write timeout reached the client")
		}
	}
}
