package histories

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/taskloom/taskloom/internal/actions"
)

// Budget is what one recorded path may cost in Temporal Cloud actions, retries aside, and what
// those actions are.
type Budget struct {
	Actions int
	Why     string
	// Varies, when set, says why the path's count depends on timing (polls, readiness loops,
	// timers that fire or not): its recorded history is held to Actions, a live run is not.
	Varies string
}

// BudgetOf is the budget of the path recorded as subsystem/name.
func BudgetOf(subsystem, name string) (Budget, bool) {
	b, ok := budgets[subsystem][name]
	return b, ok
}

// BudgetOfFile is the budget of a recorded history file.
func BudgetOfFile(file string) (Budget, bool) {
	return BudgetOf(filepath.Base(filepath.Dir(file)), strings.TrimSuffix(filepath.Base(file), ".json"))
}

// checkBudget says how a freshly run path's cost compares with its row: nothing when it is
// within, a sentence otherwise.
func checkBudget(subsystem, name string, c actions.Cost) string {
	b, ok := BudgetOf(subsystem, name)
	switch {
	case !ok:
		return fmt.Sprintf("path %s/%s has no budget: add its row to internal/testenv/histories/budgets_table.go (it cost %d actions)",
			subsystem, name, c.Designed())
	case b.Varies != "":
		return ""
	case c.Designed() > b.Actions:
		return fmt.Sprintf("path %s/%s cost %d actions (retries aside), over its budget of %d (%s): change the row, with the reason, if the new command is meant",
			subsystem, name, c.Designed(), b.Actions, b.Why)
	}
	return ""
}
