// Package vendors is the dev stack's and the tests' stand-in for the pipelines' external services:
// image/video vendors answering the endpoints of the three example pipelines (testdata/pipelines),
// a provider that always fails, a slow one, and the SCF function video-compositor, which calls the
// backend back with a correctly signed request. It is a real HTTP server; every call is counted so
// tests can assert what was (not) called.
package vendors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
)

// Mode is how a fake provider behaves.
type Mode string

// Provider behaviours.
const (
	ModeOK   Mode = "ok"   // answers every endpoint
	ModeFail Mode = "fail" // answers 503 everywhere, health included
	ModeSlow Mode = "slow" // answers correctly after SlowDelay
)

// The names the fakes answer to are the demo data's (pipelinedemo): the example pipelines'
// providers, the two misbehaving ones and the SCF function.
var (
	ExampleProviders = pipelinedemo.ExampleProviders
	FailingVendor    = pipelinedemo.FailingVendor
	SlowVendor       = pipelinedemo.SlowVendor
	SCFCompositor    = pipelinedemo.SCFCompositor
	defaultModes     = map[string]Mode{FailingVendor: ModeFail, SlowVendor: ModeSlow}
	errUnknownPath   = errors.New("unknown path")
)

// Options tune the fakes; zero values get sensible defaults.
type Options struct {
	// Secret signs SCF callbacks (INTERNAL_CALLBACK_SECRET of the backend).
	Secret []byte
	// PollsToComplete is how many status polls an async job answers "processing" before "success".
	PollsToComplete int
	// SlowDelay is how long the slow provider takes per request.
	SlowDelay time.Duration
	// CallbackDelay is how long the fake SCF "works" before calling back.
	CallbackDelay time.Duration
}

// Server is the running fake.
type Server struct {
	URL  string
	opts Options
	srv  *http.Server
	ln   net.Listener
	http *http.Client

	mu        sync.Mutex
	modes     map[string]Mode
	calls     map[string]int
	jobs      map[string]*job
	seq       int
	callbacks []CallbackResult
	wg        sync.WaitGroup
	quit      chan struct{} // closed by Close: pending callbacks are dropped
}

type job struct {
	provider string
	polls    int
	images   int
}

// CallbackResult is what the backend answered to one SCF callback.
type CallbackResult struct {
	TaskID    string
	StepIndex int
	Status    int
	Err       string
}

// Start listens on addr ("127.0.0.1:0" in tests) and serves until Close.
func Start(addr string, opts Options) (*Server, error) {
	if opts.PollsToComplete <= 0 {
		opts.PollsToComplete = 2
	}
	if opts.SlowDelay <= 0 {
		opts.SlowDelay = 3 * time.Second
	}
	if opts.CallbackDelay <= 0 {
		opts.CallbackDelay = 100 * time.Millisecond
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake vendors: listen on %s: %w", addr, err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), opts: opts, ln: ln, modes: map[string]Mode{},
		calls: map[string]int{}, jobs: map[string]*job{}, http: &http.Client{Timeout: 10 * time.Second},
		quit: make(chan struct{})}
	for k, v := range defaultModes {
		s.modes[k] = v
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server; callbacks not sent yet are dropped, one in flight is awaited.
func (s *Server) Close() error {
	close(s.quit)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	s.wg.Wait()
	return err
}

// SetMode switches a provider's behaviour (also over HTTP: PUT
// /_admin/providers/{ref}/mode/{mode}).
func (s *Server) SetMode(provider string, m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modes[provider] = m
}

func (s *Server) mode(provider string) Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.modes[provider]; ok {
		return m
	}
	return ModeOK
}

// Calls returns how often a provider's endpoint was called; endpoint is the route without ids,
// e.g. "/image/process", "/workflow/status", "/health". For the SCF use provider "scf" and the
// function name as endpoint.
func (s *Server) Calls(provider, endpoint string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[provider+" "+endpoint]
}

// Callbacks returns what the backend answered to the fake SCF's callbacks so far.
func (s *Server) Callbacks() []CallbackResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CallbackResult(nil), s.callbacks...)
}

func (s *Server) count(provider, endpoint string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[provider+" "+endpoint]++
}

// Providers lists the provider registrations of the dev stack (base_url and health_url).
func (s *Server) Providers() []pipeline.Provider {
	providers, _ := pipelinedemo.Registrations(s.URL)
	return providers
}

// Functions lists the SCF function registrations of the dev stack.
func (s *Server) Functions() []pipeline.Function {
	_, functions := pipelinedemo.Registrations(s.URL)
	return functions
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP routes /{provider}/..., /scf/{function} and /_admin/....
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)
	if len(parts) != 2 {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": errUnknownPath.Error()})
		return
	}
	switch parts[0] {
	case "scf":
		s.serveSCF(w, r, parts[1])
	case "_admin":
		s.serveAdmin(w, r, parts[1])
	default:
		s.serveProvider(w, r, parts[0], "/"+parts[1])
	}
}

func (s *Server) serveAdmin(w http.ResponseWriter, r *http.Request, rest string) {
	p := strings.Split(rest, "/")
	if r.Method == http.MethodPut && len(p) == 4 && p[0] == "providers" && p[2] == "mode" {
		m := Mode(p[3])
		if m != ModeOK && m != ModeFail && m != ModeSlow {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "mode must be ok, fail or slow"})
			return
		}
		s.SetMode(p[1], m)
		writeJSON(w, http.StatusOK, map[string]string{"provider": p[1], "mode": string(m)})
		return
	}
	if r.Method == http.MethodGet && rest == "calls" {
		s.mu.Lock()
		defer s.mu.Unlock()
		writeJSON(w, http.StatusOK, s.calls)
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"error": errUnknownPath.Error()})
}
