package waiting

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSentence(t *testing.T) {
	since := time.Date(2026, 1, 2, 12, 1, 5, 0, time.UTC)
	f := New(Callback, "step 2/3 composite (scf fn-x): waiting for callback", since, since.Add(5*time.Minute))
	want := "step 2/3 composite (scf fn-x): waiting for callback since 12:01:05 UTC, until 12:06:05 UTC"
	if got := f.Sentence(); got != want {
		t.Fatalf("Sentence() = %q, want %q", got, want)
	}
	if f := New(Operator, "suspended", since, time.Time{}); f.Until != nil {
		t.Fatalf("zero until became %v", f.Until)
	}
	var none *For
	if none.Sentence() != "" {
		t.Fatal("nil wait has a sentence")
	}
}

func TestReasonsAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Reasons {
		if seen[r] {
			t.Fatalf("reason %s listed twice", r)
		}
		seen[r] = true
	}
}

// The waiting_for table of docs/operations.md lists every reason, so the list in code and the documented one
// cannot drift apart.
func TestOperationsPageListsEveryReason(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Reasons {
		if !strings.Contains(string(raw), "| `"+r+"` |") {
			t.Errorf("the waiting_for table of docs/operations.md does not list %s", r)
		}
	}
}
