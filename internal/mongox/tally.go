package mongox

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
)

// Tally counts the MongoDB commands issued under one context: the portable cost of an operation,
// which holds on any engine where a stand-in's timings do not. Tests assert budgets with it and
// the benchmark reports commands per unit of work.
type Tally struct {
	mu   sync.Mutex
	cmds []Command
}

// Command is one command the driver sent: its name (find, update, …), the collection it names,
// and the command document itself (for filter and sort shapes).
type Command struct {
	Name       string
	Collection string
	Body       bson.Raw
}

type tallyKey struct{}

// WithTally returns a context whose MongoDB commands are counted in the returned tally. A tally
// already on ctx keeps counting too, so nested scopes both see the commands.
func WithTally(ctx context.Context) (context.Context, *Tally) {
	t := &Tally{}
	parents, _ := ctx.Value(tallyKey{}).([]*Tally)
	scopes := append(append([]*Tally(nil), parents...), t)
	return context.WithValue(ctx, tallyKey{}, scopes), t
}

// Monitor is the command monitor that feeds every tally on a command's context and, when counted
// is not nil, a process-wide counter by command and collection (NewCommandCounter). Commands on
// an untallied context cost one context lookup.
func Monitor(counted *prometheus.CounterVec) *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(ctx context.Context, e *event.CommandStartedEvent) {
		recorder.observe(ctx, e)
		if ignoredCommand(e.CommandName) {
			return
		}
		coll := collectionOf(e.Command, e.CommandName)
		if counted != nil {
			counted.WithLabelValues(e.CommandName, coll).Inc()
		}
		scopes, _ := ctx.Value(tallyKey{}).([]*Tally)
		if len(scopes) == 0 {
			return
		}
		c := Command{Name: e.CommandName, Collection: coll, Body: cloneRaw(e.Command)}
		for _, t := range scopes {
			t.add(c)
		}
	}}
}

// CommandsMetric is the name of the counter NewCommandCounter registers.
const CommandsMetric = "taskloom_mongo_commands_total"

// NewCommandCounter registers the counter of MongoDB commands a process sends, by command name
// and collection: the portable cost an operator can divide by the work done (the benchmark
// does), where the database's own timings depend on the engine.
func NewCommandCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: CommandsMetric,
		Help: "MongoDB commands sent, by command name and collection (driver connection chatter excluded).",
	}, []string{"command", "collection"})
	reg.MustRegister(c)
	return c
}

// ignoredCommand names the driver's own connection chatter, which is not work an operation asked for.
func ignoredCommand(name string) bool {
	switch name {
	case "hello", "isMaster", "ismaster", "ping", "saslStart", "saslContinue", "endSessions", "buildInfo", "getLastError":
		return true
	}
	return false
}

func collectionOf(cmd bson.Raw, name string) string {
	v, err := cmd.LookupErr(name)
	if err != nil {
		return ""
	}
	s, _ := v.StringValueOK()
	return s
}

func cloneRaw(r bson.Raw) bson.Raw { return append(bson.Raw(nil), r...) }

func (t *Tally) add(c Command) {
	t.mu.Lock()
	t.cmds = append(t.cmds, c)
	t.mu.Unlock()
}

// Total is the number of commands counted so far.
func (t *Tally) Total() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.cmds)
}

// Commands returns a copy of the commands counted so far, in the order they started.
func (t *Tally) Commands() []Command {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Command(nil), t.cmds...)
}

// Reset forgets what was counted, so one tally can measure successive operations.
func (t *Tally) Reset() {
	t.mu.Lock()
	t.cmds = nil
	t.mu.Unlock()
}

// String summarises the tally as "3 commands: find tasks ×1, update tasks ×2", for test failures.
func (t *Tally) String() string {
	counts := map[string]int{}
	cmds := t.Commands()
	for _, c := range cmds {
		counts[c.Name+" "+c.Collection]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, counts[k])
	}
	return fmt.Sprintf("%d commands: %s", len(cmds), strings.Join(parts, ", "))
}

// Merge adds what other counted to t.
func (t *Tally) Merge(other *Tally) {
	cmds := other.Commands()
	t.mu.Lock()
	t.cmds = append(t.cmds, cmds...)
	t.mu.Unlock()
}
