package storecontract_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv"
)

// domainPackages are written to MongoDB's documented guarantees alone
// (docs/architecture.md "The store contract and index coverage"): they may not know which engine stands in for MongoDB, nor recognise its errors by text.
// Each is checked with every package below it, so a store split out into a subpackage stays
// covered.
var domainPackages = []string{"internal/taskecho", "internal/pipeline", "internal/entry", "internal/webhook", "internal/crawl"}

// forbidden is what betrays a store workaround in domain code: naming the stand-in, or
// matching a database's error text instead of using the driver's error predicates
// (mongo.IsDuplicateKeyError, errors.Is(err, mongo.ErrNoDocuments)).
var forbidden = []struct {
	re   *regexp.Regexp
	why  string
	skip func(file, line string) bool
}{
	{re: regexp.MustCompile(`(?i)ferret`), why: "names the stand-in database"},
	// SQLite as the stand-in's engine (its error texts, its locking). webhook's SQLite capture
	// records are a data source of the subsystem, not the store, and may name the driver.
	{re: regexp.MustCompile(`(?i)sqlite`), why: "names the stand-in's engine", skip: isCaptureRecordsSource},
	{re: regexp.MustCompile(`(?i)UNIQUE constraint|database is locked|SQLITE_|E11000`), why: "matches a database error text"},
	{re: regexp.MustCompile(`strings\.(Contains|HasPrefix|HasSuffix|Index)\(\s*err\.Error\(\)`), why: "matches an error by its text", skip: isNonDriverErrorText},
}

// isCaptureRecordsSource reports a line of webhook's capture-records reader (package webhook or
// its capturedb) naming its SQLite database, a configured data source, rather than the store.
func isCaptureRecordsSource(file, line string) bool {
	dir := filepath.Base(filepath.Dir(file))
	return (dir == "webhook" || dir == "capturedb") && !strings.Contains(strings.ToLower(line), "ferret")
}

// isNonDriverErrorText allows matching the text of errors that are not the database's (the JSON
// decoder's unknown-field message, which has no typed error).
func isNonDriverErrorText(_, line string) bool { return strings.Contains(line, `json: unknown field`) }

// Domain packages name no stand-in and match no database error text.
func TestDomainCodeUsesOnlyTheStoreContract(t *testing.T) {
	root := testenv.RepoRoot()
	checked := 0
	for _, pkg := range domainPackages {
		err := filepath.WalkDir(filepath.Join(root, pkg), func(f string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
				return err
			}
			checked++
			checkFile(t, root, f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the domain packages moved", checked)
	}
}

func checkFile(t *testing.T, root, path string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, path)
	for i, line := range strings.Split(string(src), "\n") {
		for _, f := range forbidden {
			if !f.re.MatchString(line) || (f.skip != nil && f.skip(path, line)) {
				continue
			}
			t.Errorf("%s:%d %s: %s", rel, i+1, f.why, strings.TrimSpace(line))
		}
	}
}
