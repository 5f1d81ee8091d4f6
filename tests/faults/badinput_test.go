package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// bodyLimit is API_BODY_LIMIT for this suite: small, so the over-limit case stays cheap.
const (
	bodyLimit      = "64K"
	bodyLimitBytes = 64 << 10
)

// badCase is one hostile request and the status it must get (0 = any 4xx).
type badCase struct {
	name string
	req  request
	want int
}

// writeRoutes are the routes a bad body can reach: every POST/PUT/PATCH except the web UI,
// whose forms are not JSON and are covered by the session test.
func writeRoutes(env *e2e.Env) []route {
	var out []route
	for _, r := range routeTable(env) {
		if (r.method == http.MethodPost || r.method == http.MethodPut || r.method == http.MethodPatch) && !isUI(r) {
			out = append(out, r)
		}
	}
	return out
}

// bodyCases builds the table for one route: generic broken bodies, then per-field wrong types
// and unknown enum values from the route's schema in api/openapi.yaml.
func bodyCases(s *spec, r route, key string) []badCase {
	path := fill(r.path, probeID)
	mk := func(name string, body []byte, want int) badCase {
		return badCase{name, request{method: r.method, path: path, key: key, body: body}, want}
	}
	huge := append(append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), bodyLimitBytes+1024)...), `"}`...)
	cases := []badCase{
		mk("malformed JSON", []byte(`{"a":`), 0),
		mk("trailing garbage", []byte(`{} {"a":1}`), 0),
		mk("array instead of object", []byte(`[1,2,3]`), 0),
		mk("bare string", []byte(`"hello"`), 0),
		mk("invalid UTF-8", []byte("{\"x\":\"\xff\xfe\xfd\"}"), 0),
		mk("deeply nested", append(bytes.Repeat([]byte("["), 10000), bytes.Repeat([]byte("]"), 10000)...), 0),
		mk("over API_BODY_LIMIT", huge, http.StatusRequestEntityTooLarge),
	}
	chunked := mk("over API_BODY_LIMIT, chunked", huge, 0)
	chunked.req.chunked = true
	cases = append(cases, chunked)
	sc := s.bodySchema(r)
	if sc == nil {
		return cases
	}
	for _, name := range sortedProps(sc) {
		prop := s.resolve(sc.Properties[name])
		if prop == nil {
			continue
		}
		if v := wrongValue(prop); v != nil {
			body, _ := json.Marshal(withRequired(s, sc, name, v))
			cases = append(cases, mk(fmt.Sprintf("field %s has the wrong type", name), body, 0))
		}
		if len(prop.Enum) > 0 {
			body, _ := json.Marshal(withRequired(s, sc, name, "no_such_value"))
			cases = append(cases, mk(fmt.Sprintf("field %s has an unknown enum value", name), body, 0))
		}
	}
	return cases
}

// hostileIDs are path parameter values that must match nothing: a NoSQL operator object, an
// SQL-injection shape, path traversal, a regex wildcard, invalid UTF-8 and an oversized id.
var hostileIDs = []string{
	url.PathEscape(`{"$gt":""}`),
	url.PathEscape(`' OR '1'='1' --`),
	url.PathEscape(`../../../etc/passwd`),
	"..%2F..%2F..%2Fetc%2Fpasswd",
	url.PathEscape(`.*`),
	"%FF%FE%FD",
	strings.Repeat("x", 2000),
}

// idCases puts each hostile id into every path parameter of every protected route. Write
// routes get an empty object, so nothing valid is ever sent.
func idCases(env *e2e.Env, key string) []badCase {
	var cases []badCase
	for _, r := range routeTable(env) {
		if isUI(r) || len(params(r.path)) == 0 || r.path == "/ui/static/*" {
			continue
		}
		for _, id := range hostileIDs {
			req := request{method: r.method, path: fill(r.path, id), key: key}
			if r.mutating() {
				req.body = []byte(`{}`)
			}
			name := id
			if len(name) > 40 {
				name = name[:40] + "…"
			}
			cases = append(cases, badCase{"id " + name, req, 0})
		}
	}
	return cases
}

// Fault: hostile input on every write route and in every path id, sent with an admin key so
// nothing is refused for lack of permission. Must hold: a 4xx in the JSON error envelope (413
// for a body over API_BODY_LIMIT), never a 2xx or 5xx, and no state change — the same documents
// in every collection of the application's database and no workflow started.
func TestBadInputIsRejectedWithoutStateChange(t *testing.T) {
	env := e2e.New(t, func(c *config.Config) { c.API.BodyLimit = bodyLimit })
	s := loadSpec(t)
	key := env.AdminKey
	var cases []badCase
	for _, r := range writeRoutes(env) {
		for _, c := range bodyCases(s, r, key) {
			c.name = r.String() + ": " + c.name
			cases = append(cases, c)
		}
	}
	for _, c := range idCases(env, key) {
		c.name = c.req.method + " " + c.req.path[:min(len(c.req.path), 90)] + ": " + c.name
		cases = append(cases, c)
	}
	if len(cases) < 20 {
		t.Fatalf("only %d cases generated; the route table is not the real router's", len(cases))
	}

	before := snapshot(t, env)
	for _, c := range cases {
		resp := send(t, env, c.req)
		if resp.Status >= 500 {
			t.Errorf("%s: %d (never a 5xx for bad input): %s", c.name, resp.Status, snippet(resp.Body))
			continue
		}
		expectError(t, c.name, resp, c.want)
	}
	time.Sleep(time.Second) // let visibility catch up with any workflow a request started
	after := snapshot(t, env)
	if !before.equal(after) {
		t.Errorf("state changed by rejected requests:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("%d hostile requests over %d write routes: all 4xx, no state change (%v)", len(cases), len(writeRoutes(env)), after)
}

// state is what a rejected request must not change: document counts per collection and the
// number of workflows on the env's task queue.
type state struct {
	Docs      map[string]int64
	Workflows int64
}

// equal compares counts; a collection that exists on one side only counts as empty on the
// other (creating an empty collection or index is not a state change).
func (a state) equal(b state) bool {
	if a.Workflows != b.Workflows {
		return false
	}
	for k, v := range a.Docs {
		if b.Docs[k] != v {
			return false
		}
	}
	for k, v := range b.Docs {
		if a.Docs[k] != v {
			return false
		}
	}
	return true
}

func (a state) String() string {
	names := make([]string, 0, len(a.Docs))
	for n := range a.Docs {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%d ", n, a.Docs[n])
	}
	fmt.Fprintf(&b, "workflows=%d", a.Workflows)
	return b.String()
}

func snapshot(t testing.TB, env *e2e.Env) state {
	t.Helper()
	ctx, cancel := context.WithTimeout(env.Context(), 30*time.Second)
	defer cancel()
	db := env.Platform.Mongo
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatalf("list collections: %v", err)
	}
	st := state{Docs: map[string]int64{}}
	for _, n := range names {
		if st.Docs[n], err = db.Collection(n).CountDocuments(ctx, bson.D{}); err != nil {
			t.Fatalf("count %s: %v", n, err)
		}
	}
	resp, err := env.Platform.Temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{
		Query: fmt.Sprintf("TaskQueue = %q", env.Config.Temporal.TaskQueue)})
	if err != nil {
		t.Fatalf("count workflows: %v", err)
	}
	st.Workflows = resp.GetCount()
	return st
}
