// Package budgets holds the cost of every recorded workflow path: the Temporal Cloud actions
// each history under testdata/histories costs, against its row in
// internal/testenv/histories/budgets_table.go.
package budgets

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/taskloom/taskloom/internal/actions"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/histories"
)

// TestActionBudgets is one subtest per workflow type, one per recorded path of it: the path
// costs exactly its budget, so an added activity, timer or upsert fails here once its history
// is recorded, and a saving shows as a row to lower.
func TestActionBudgets(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "testdata", "histories", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	byType := map[string][]string{}
	for _, f := range files {
		wt, err := histories.WorkflowType(f)
		if err != nil {
			t.Fatal(err)
		}
		byType[wt] = append(byType[wt], f)
	}
	types := make([]string, 0, len(byType))
	for wt := range byType {
		types = append(types, wt)
	}
	sort.Strings(types)
	for _, wt := range types {
		t.Run(wt, func(t *testing.T) {
			for _, f := range byType[wt] {
				path := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
				b, ok := histories.BudgetOfFile(f)
				if !ok {
					t.Errorf("%s has no budget row", path)
					continue
				}
				c, err := actions.FromFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if c.Designed() != b.Actions {
					t.Errorf("%s costs %d actions (%d events), its budget says %d (%s)", path, c.Designed(), c.Events, b.Actions, b.Why)
				}
			}
		})
	}
}
