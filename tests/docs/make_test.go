package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv"
)

// makeTarget is a rule a person runs: a lower-case name at the start of a line (not a file under
// $(BIN), not FORCE, not a variable assignment).
var makeTarget = regexp.MustCompile(`^([a-z][a-z-]*):([^=]|$)`)

// `make help` prints the `## …` comment after each target's name: every target has one.
func TestEveryMakeTargetHasAHelpLine(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, line := range strings.Split(string(raw), "\n") {
		m := makeTarget.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		if _, help, ok := strings.Cut(line, "## "); !ok || strings.TrimSpace(help) == "" {
			t.Errorf("Makefile:%d: target %s has no `## …` line for make help", i+1, m[1])
		}
	}
	if n < 10 {
		t.Fatalf("found %d targets in the Makefile: the pattern is broken", n)
	}
}
