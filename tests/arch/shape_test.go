package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// subsystems are the five task systems; each has the same packages in every layer
// (docs/architecture.md "The shape of a subsystem").
var subsystems = []string{"pipeline", "entry", "taskecho", "webhook", "crawl"}

// drivers are the engines' client libraries. A domain package (internal/<subsystem>) states its
// rules and model and reaches none of them; its store and adapter packages do.
var drivers = []string{
	"go.mongodb.org/mongo-driver",
	"github.com/redis/go-redis",
	"github.com/twmb/franz-go",
	"github.com/larksuite/oapi-sdk-go",
	"github.com/prometheus/client_golang",
}

// TestDomainPackagesReachNoDriver: internal/<subsystem> reaches no driver, directly or through
// another taskloom package.
func TestDomainPackagesReachNoDriver(t *testing.T) {
	for _, x := range subsystems {
		p := module + "/internal/" + x
		g := loadGraph(t, "./internal/"+x)
		for _, v := range g.reach(p, drivers, nil) {
			t.Errorf("domain package %s reaches a driver: %s", p, v)
		}
	}
}

// temporalCalls are the client calls that start, signal, update, query, describe or end an
// execution. Each subsystem makes them in one file, workflows/<subsystem>/client.go, its face to
// Temporal, and the bulk operations they share in internal/bulk/client.go; visibility lists and
// counts (the console's read model) are not among them.
var temporalCalls = []string{
	"ExecuteWorkflow", "SignalWorkflow", "SignalWithStartWorkflow", "UpdateWorkflow",
	"UpdateWithStartWorkflow", "QueryWorkflow", "QueryWorkflowWithOptions", "DescribeWorkflowExecution",
	"DescribeWorkflow", "TerminateWorkflow", "CancelWorkflow", "GetWorkflow", "GetWorkflowUpdateHandle",
}

// TestOneTemporalFacePerSubsystem: production code outside workflows/<subsystem>/client.go makes no
// call of temporalCalls. The test kit (internal/testenv) and the benchmarks, which measure bare
// Temporal baselines, are not production code.
func TestOneTemporalFacePerSubsystem(t *testing.T) {
	for _, f := range goFiles(t, "api", "internal", "activities", "starter", "worker", "workflows") {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "internal/testenv/") || isClientFile(f) {
			continue
		}
		file := parseFile(t, f)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && slices.Contains(temporalCalls, sel.Sel.Name) {
				t.Errorf("%s:%d calls %s outside workflows/<subsystem>/client.go and internal/bulk/client.go",
					f, fset.Position(call.Pos()).Line, sel.Sel.Name)
			}
			return true
		})
	}
}

func isClientFile(f string) bool {
	if f == "internal/bulk/client.go" {
		return true
	}
	parts := strings.Split(f, "/")
	return len(parts) == 3 && parts[0] == "workflows" && slices.Contains(subsystems, parts[1]) && parts[2] == "client.go"
}

// TestImportAliases: subsystem packages of the layers are imported under one alias each —
// workflows/<x> as <x>wf, activities/<x> as <x>act, api/<x> as <x>api — and every other taskloom
// package under its own name, so a name means the same package in every file.
func TestImportAliases(t *testing.T) {
	for _, f := range goFiles(t, ".") {
		for _, imp := range parseFile(t, f).Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(path, module+"/")
			if !ok {
				continue
			}
			want := wantAlias(rel)
			got := ""
			if imp.Name != nil {
				got = imp.Name.Name
			}
			if got == "_" || got == want || (want == "" && got == filepath.Base(rel)) {
				continue
			}
			if want == "" {
				t.Errorf("%s imports %s as %s: import it under its own name", f, rel, got)
			} else {
				t.Errorf("%s imports %s as %q: want %s", f, rel, got, want)
			}
		}
	}
}

// wantAlias is the alias an import of the module-relative path rel must carry ("" for none).
func wantAlias(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) != 2 || !slices.Contains(subsystems, parts[1]) {
		return ""
	}
	switch parts[0] {
	case "workflows":
		return parts[1] + "wf"
	case "activities":
		return parts[1] + "act"
	case "api":
		return parts[1] + "api"
	}
	return ""
}

// TestNoPackageNamedEcho: "echo" is the HTTP framework; the TaskEcho-compatible subsystem is
// taskecho in every layer.
func TestNoPackageNamedEcho(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, name, _ := strings.Cut(line, " "); name == "echo" {
			t.Errorf("package %s is named echo", path)
		}
	}
}

var fset = token.NewFileSet()

func parseFile(t *testing.T, rel string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(fset, filepath.Join("../..", rel), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// goFiles lists the .go files under the module-relative directories, as module-relative paths.
func goFiles(t *testing.T, dirs ...string) []string {
	t.Helper()
	var files []string
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join("../..", d), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && (strings.HasPrefix(e.Name(), ".") && e.Name() != "." && e.Name() != ".." || e.Name() == "testdata") {
				return filepath.SkipDir
			}
			if !e.IsDir() && strings.HasSuffix(p, ".go") {
				rel, _ := filepath.Rel("../..", p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}
