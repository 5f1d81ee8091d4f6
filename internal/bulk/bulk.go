// Package bulk is every bulk operation (the entry queue's resume and drop, the pipeline's
// redrive; docs/operations.md "Redrive") written once: an Op names one, the workflow loop (Run)
// works its pages at a bounded rate, Client starts it and reads its progress, and Plan is the
// dry run and the start that the API, the console and the CLI share. A subsystem brings its
// filter (F), what each page carries besides it (P), its per-task outcome (O), the page
// activity, and the store query that counts a filter's tasks.
package bulk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Pacing defaults: DefaultBatchSize tasks per page, one page per DefaultInterval.
const (
	DefaultBatchSize = 10
	DefaultInterval  = time.Second
	// MaxOutcomes bounds the per-task outcomes an operation keeps (in its query answer, its
	// result and its continue-as-new input); the counters cover every task.
	MaxOutcomes = 1000
)

// Every operation's outcome words besides its own "applied" one (resumed, dropped, redriven).
const (
	// OutcomeSkipped: the task no longer qualified when its turn came (done already, e.g. by an
	// earlier attempt of the same page, or refused by the single-task path).
	OutcomeSkipped = "skipped"
	// OutcomeError: the single-task path failed for another reason.
	OutcomeError = "error"
)

// Outcome is what an operation did to one task; Result is its outcome word.
type Outcome interface{ Result() string }

// Op names one bulk operation; each subsystem declares its own (workflows/entry: resume and
// drop, workflows/pipeline: redrive).
type Op struct {
	// Name is the operation's word (resume, drop, redrive): its routes' last segment and its
	// progress's Op.
	Name string
	// Noun names it in messages: "bulk redrive".
	Noun string
	// ID prefixes its workflow IDs and namespaces the ids an Idempotency-Key derives.
	ID string
	// Workflow is its workflow function; Kind and Running are the TaskloomKind and
	// TaskloomStatus it starts with.
	Workflow any
	Kind     string
	Running  string
}

// WorkflowID is the workflow ID of the operation's run id.
func (o Op) WorkflowID(id string) string { return o.ID + ":" + id }

// IDForKey is the id of the operation that an Idempotency-Key names within a scope (the caller's
// identity): a repeated request finds the same operation.
func (o Op) IDForKey(scope, key string) string {
	sum := sha256.Sum256([]byte(o.ID + "\x00" + scope + "\x00" + key))
	return hex.EncodeToString(sum[:12])
}

// ValidID reports whether id has the shape of an operation id (IDForKey's, or a fresh task id):
// 24 lowercase hex digits. Anything else names no operation.
func ValidID(id string) bool {
	_, err := hex.DecodeString(id)
	return len(id) == 24 && err == nil && strings.ToLower(id) == id
}

// ErrConflict: the operation id is taken by an operation with a different filter.
var ErrConflict = errors.New("bulk operation id reused with a different filter")

// ErrNotFound: there is no such operation.
var ErrNotFound = errors.New("no such bulk operation")

// Input starts (or continues) an operation.
type Input[F, P any, O Outcome] struct {
	// Op is the operation's Name; ID its id (Op.WorkflowID names its workflow).
	Op string
	ID string
	// Requested is the filter as the caller sent it; Filter the one applied (Plan.Apply).
	Requested F
	Filter    F
	// Params go with every page besides the filter (entry: the signal payload).
	Params    P
	BatchSize int
	Interval  time.Duration
	// Progress and Cursor carry the operation over continue-as-new; zero on the first run.
	Progress Progress[F, O]
	Cursor   string
}

// Progress is what an operation has done so far (its progress query, and its result).
type Progress[F any, O Outcome] struct {
	ID string
	Op string
	// Total is the dry-run count when the operation started; tasks that qualify while it runs
	// are not added.
	Total    int64
	Done     int
	Applied  int
	Skipped  int
	Errors   int
	Finished bool
	// Outcomes lists each task's outcome, at most MaxOutcomes of them.
	Outcomes  []O
	Requested F
}

// add counts a page's outcomes.
func (p *Progress[F, O]) add(outs []O) {
	for _, o := range outs {
		p.Done++
		switch o.Result() {
		case OutcomeSkipped:
			p.Skipped++
		case OutcomeError:
			p.Errors++
		default:
			p.Applied++
		}
		if len(p.Outcomes) < MaxOutcomes {
			p.Outcomes = append(p.Outcomes, o)
		}
	}
}

// PageRequest asks the operation's page activity for up to Limit tasks of Filter with an id after
// After, each through the single-task path with Params. Op and ID are the operation's.
type PageRequest[F, P any] struct {
	Op     string
	ID     string
	Filter F
	After  string
	Limit  int
	Params P
}

// Page is one page's outcomes; Last is the page's last task id (the next page's After), Done
// when it was the last page.
type Page[O any] struct {
	Outcomes []O
	Last     string
	Done     bool
}

// Work is a page activity's loop: each of ids (the page of up to req.Limit tasks after
// req.After) through one, in order. A page shorter than the limit is the last.
func Work[F, P any, O Outcome](req PageRequest[F, P], ids []string, one func(id string) O) *Page[O] {
	page := &Page[O]{Last: req.After, Done: len(ids) < req.Limit}
	for _, id := range ids {
		page.Outcomes = append(page.Outcomes, one(id))
		page.Last = id
	}
	return page
}

// SameFilter reports whether two filters are the same request.
func SameFilter[F any](a, b F) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
