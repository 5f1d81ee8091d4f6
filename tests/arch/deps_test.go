// Package arch holds the dependency rules of the layout (docs/architecture.md):
// what the production binary links, and which way packages import. Each rule walks the import
// graph `go list -deps` reports, so a violation names the chain of imports that causes it.
package arch

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/taskloom/taskloom"

// standIns are the packages only the dev stack (./starter/dev) and tests may link: the Redis and
// Kafka stand-ins, and everything under internal/devstack (the embedded database and its wire proxy,
// the Bitable emulator, the in-repo fakes) with the FerretDB it embeds.
var standIns = []string{
	"github.com/FerretDB/FerretDB",
	"github.com/alicebob/miniredis",
	"github.com/twmb/franz-go/pkg/kfake",
	module + "/internal/devstack",
}

// connectors open network connections; a workflow package must not reach them (workflows are
// deterministic; everything external is an activity).
var connectors = []string{
	"go.mongodb.org/mongo-driver",
	"github.com/redis/go-redis",
	"github.com/twmb/franz-go",
	"net/http",
}

// temporalSDK is where the walk for workflow packages stops: the SDK a workflow is written
// against links gRPC and net/http itself, for its client.
var temporalSDK = []string{"go.temporal.io/"}

// TestProductionBinaryLinksNoStandIns: the binary users deploy (`starter api|worker|…`) links no
// stand-in; the dev stack is ./starter/dev.
func TestProductionBinaryLinksNoStandIns(t *testing.T) {
	g := loadGraph(t, "./starter")
	for _, v := range g.reach(module+"/starter", standIns, nil) {
		t.Errorf("./starter links stand-in %s", v)
	}
	// The rule is not vacuous: the dev stack links them.
	dev := loadGraph(t, "./starter/dev")
	if len(dev.reach(module+"/starter/dev", standIns, nil)) == 0 {
		t.Fatal("./starter/dev links no stand-in: the rule above checks nothing")
	}
}

// TestNoUpwardImports: lower layers never import the layers built on them.
func TestNoUpwardImports(t *testing.T) {
	rules := []struct{ from, forbidden string }{
		{"./internal/...", module + "/api"},
		{"./internal/...", module + "/worker"},
		{"./internal/...", module + "/starter"},
		{"./activities/...", module + "/workflows"},
		{"./activities/...", module + "/api"},
		{"./workflows/...", module + "/api"},
	}
	for _, r := range rules {
		g := loadGraph(t, r.from)
		for _, p := range g.roots {
			if strings.HasPrefix(p, module+"/internal/testenv") {
				continue // the test harness drives the whole application, api included
			}
			for _, v := range g.reach(p, []string{r.forbidden}, nil) {
				t.Errorf("%s imports %s", p, v)
			}
		}
	}
}

// TestHandlersQueryNoStoreDirectly: the HTTP handlers (api/<subsystem>, the console in api/ui)
// import neither the MongoDB driver nor go-redis; filters, sorts and not-found errors belong to
// the domain package. api/httpx maps store
// errors to HTTP answers for all of them and is the one exception.
func TestHandlersQueryNoStoreDirectly(t *testing.T) {
	g := loadGraph(t, "./api/...")
	stores := []string{"go.mongodb.org/mongo-driver", "github.com/redis/go-redis"}
	for _, p := range g.roots {
		if p == module+"/api/httpx" {
			continue
		}
		for _, imp := range g.imports[p] {
			if hasPrefix(imp, stores) {
				t.Errorf("%s imports %s directly", p, imp)
			}
		}
	}
}

// TestWorkflowsOpenNoConnections: no workflows/* package reaches a package that opens a
// connection, other than through the Temporal SDK itself: the activity structs a workflow names
// its activities by hold interfaces, and the stores and clients behind them are wired in worker/.
func TestWorkflowsOpenNoConnections(t *testing.T) {
	g := loadGraph(t, "./workflows/...")
	if len(g.roots) < 5 {
		t.Fatalf("found %d workflow packages, want one per subsystem", len(g.roots))
	}
	for _, p := range g.roots {
		for _, imp := range g.imports[p] {
			found := g.reach(imp, connectors, temporalSDK)
			if hasPrefix(imp, connectors) {
				found = append(found, imp)
			}
			if len(found) > 0 {
				t.Errorf("%s imports %s, which reaches %s", p, imp, found[0])
			}
		}
	}
	// The rule covers the activity structs: every workflow package names its activities by
	// method value on one, so it imports its activities package.
	for _, p := range g.roots {
		if !slices.ContainsFunc(g.imports[p], func(imp string) bool { return strings.HasPrefix(imp, module+"/activities/") }) {
			t.Errorf("%s imports no activities package: its activities are not called by method value", p)
		}
	}
}

// graph is the import graph of some packages and their dependencies (tests excluded).
type graph struct {
	roots   []string
	imports map[string][]string
}

func loadGraph(t *testing.T, pattern string) *graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,DepOnly,Standard", pattern)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -deps %s: %v\n%s", pattern, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pattern, err)
	}
	g := &graph{imports: map[string][]string{}}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			DepOnly    bool
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		g.imports[p.ImportPath] = p.Imports
		if !p.DepOnly {
			g.roots = append(g.roots, p.ImportPath)
		}
	}
	return g
}

// reach walks the imports from root, not descending into packages under a stop prefix, and
// returns each package under a forbidden prefix it reaches, as the import chain that leads there.
func (g *graph) reach(root string, forbidden, stop []string) []string {
	var found []string
	seen := map[string]bool{root: true}
	var walk func(p string, chain []string)
	walk = func(p string, chain []string) {
		for _, imp := range g.imports[p] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			next := append(append([]string{}, chain...), imp)
			if hasPrefix(imp, forbidden) {
				found = append(found, strings.Join(next, " → "))
				continue
			}
			if !hasPrefix(imp, stop) {
				walk(imp, next)
			}
		}
	}
	walk(root, []string{root})
	return found
}

// hasPrefix reports whether path is one of prefixes or inside one of them.
func hasPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}
