// Package feishuemu is an in-process emulator of the Feishu Open API subset taskloom uses
// (tenant token, Bitable records/tables/fields, wiki get_node). It follows the behaviour the
// real server shows to github.com/larksuite/oapi-sdk-go/v3: JSON content type on every answer,
// {code,msg,data} envelopes, no page_token on the last page, 500-record limits, token checks,
// InvalidFilter for what Feishu rejects, injectable rate-limit and write-conflict faults and a
// per-endpoint call counter. Tests start it on 127.0.0.1:0; the dev stack runs it on a port.
package feishuemu

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options configures a Server.
type Options struct {
	// Apps maps app_id → app_secret. Empty accepts any credentials.
	Apps map[string]string
	// Location is the document time zone for ExactDate (Asia/Shanghai if nil).
	Location *time.Location
	// TokenTTL is the expire reported for tenant tokens (7200s if zero).
	TokenTTL time.Duration
	// BatchLimit caps batch_create/batch_update (500 if zero).
	BatchLimit int
	// WriteConflicts answers 1254291 to a write that arrives while another write to the same
	// base is in progress, as real Feishu does.
	WriteConflicts bool
	// Now overrides the clock (tests of Today/Yesterday filters).
	Now func() time.Time
	// Users is the tenant's directory (open_id → name) used to render person cells as
	// [{id,name,en_name,email,avatar_url}]; an id missing here renders with the name it was
	// written with, if any.
	Users map[string]string
	// OnWrite, when set, sees every applied record write (table id, record id, the cells as
	// written) after it is stored; tests use it to count writes per field.
	OnWrite func(tableID, recordID string, fields map[string]any)
	// AnswerDelay, when set, holds each answer of an endpoint back for the duration it returns:
	// the answer is computed when the request arrives and delivered late, as over a slow
	// network, so a read describes the table as it was when it was read (tests of stale reads).
	// tableID is the table the call names, empty for calls that name none.
	AnswerDelay func(endpoint, tableID string) time.Duration
}

// Server is the emulator. Handler() serves it; Start runs it on a listener.
type Server struct {
	opts   Options
	store  *store
	faults faults

	tokMu  sync.Mutex
	tokens map[string]time.Time // issued token → expiry

	srv *http.Server
	url string
}

// New builds an emulator with the given options and fixtures.
func New(opts Options, fixtures ...Fixture) (*Server, error) {
	if opts.Location == nil {
		loc, err := time.LoadLocation("Asia/Shanghai")
		if err != nil {
			return nil, fmt.Errorf("feishuemu: load time zone: %w", err)
		}
		opts.Location = loc
	}
	if opts.TokenTTL == 0 {
		opts.TokenTTL = 2 * time.Hour
	}
	if opts.BatchLimit == 0 {
		opts.BatchLimit = 500
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, store: newStore(opts.Now), tokens: map[string]time.Time{}}
	s.faults.calls = map[string]int{}
	for _, fx := range fixtures {
		if err := s.Load(fx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Load adds tables and wiki nodes; a table id that exists is replaced.
func (s *Server) Load(fx Fixture) error { return s.store.load(fx) }

// Start serves on addr ("127.0.0.1:0" in tests) until Close.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("feishuemu: listen %s: %w", addr, err)
	}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.url = "http://" + ln.Addr().String()
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

// URL is the base URL to give lark.WithOpenBaseUrl (no trailing slash).
func (s *Server) URL() string { return s.url }

// Close stops the listener.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Inject arms a fault.
func (s *Server) Inject(f Fault) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.pending = append(s.faults.pending, f)
}

// Calls returns how many requests each endpoint received (faulted ones included).
func (s *Server) Calls() map[string]int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return maps.Clone(s.faults.calls)
}

// TotalCalls sums Calls over every endpoint except the token endpoint.
func (s *Server) TotalCalls() int {
	n := 0
	for ep, c := range s.Calls() {
		if ep != EPToken {
			n += c
		}
	}
	return n
}

// ResetCalls zeroes the counter.
func (s *Server) ResetCalls() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.calls = map[string]int{}
}

// Handler routes the Open API paths plus GET /_emulator/calls (the counter as JSON).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	const rec = "/open-apis/bitable/v1/apps/{app}/tables/{table}/records"
	mux.HandleFunc("POST /open-apis/auth/v3/tenant_access_token/internal", s.handleToken)
	mux.HandleFunc("POST "+rec+"/search", s.authed(EPSearch, s.handleSearch))
	mux.HandleFunc("GET "+rec, s.authed(EPList, s.handleList))
	mux.HandleFunc("GET "+rec+"/{record}", s.authed(EPGet, s.handleGet))
	mux.HandleFunc("POST "+rec+"/batch_get", s.authed(EPBatchGet, s.handleBatchGet))
	mux.HandleFunc("POST "+rec, s.authed(EPCreate, s.handleCreate))
	mux.HandleFunc("PUT "+rec+"/{record}", s.authed(EPUpdate, s.handleUpdate))
	mux.HandleFunc("POST "+rec+"/batch_create", s.authed(EPBatchCreate, s.handleBatchCreate))
	mux.HandleFunc("POST "+rec+"/batch_update", s.authed(EPBatchUpdate, s.handleBatchUpdate))
	mux.HandleFunc("GET /open-apis/bitable/v1/apps/{app}/tables", s.authed(EPTables, s.handleTables))
	mux.HandleFunc("GET /open-apis/bitable/v1/apps/{app}/tables/{table}/fields", s.authed(EPFields, s.handleFields))
	mux.HandleFunc("GET /open-apis/wiki/v2/spaces/get_node", s.authed(EPWikiNode, s.handleWikiNode))
	mux.HandleFunc("GET /_emulator/calls", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Calls())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"code": 404, "msg": "404 page not found: " + r.Method + " " + r.URL.Path})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Tt-Logid", newID("log"))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeOK(w http.ResponseWriter, data any) {
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": data})
}

func writeErr(w http.ResponseWriter, e *apiErr) {
	status := e.status
	if status == 0 {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"code": e.code, "msg": e.msg, "data": map[string]any{}})
}

func newID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}
