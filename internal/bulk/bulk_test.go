package bulk

import "testing"

// An Idempotency-Key names one operation per scope and Op: the same key finds the same id, another
// scope or operation another one, and every such id has the shape the progress routes accept.
func TestIDForKeyIsScopedAndValid(t *testing.T) {
	resume, drop := Op{ID: "entry-bulk-resume"}, Op{ID: "entry-bulk-drop"}
	a := resume.IDForKey("key-1", "k")
	if a != resume.IDForKey("key-1", "k") || a == resume.IDForKey("key-2", "k") || a == drop.IDForKey("key-1", "k") {
		t.Fatalf("ids: %s", a)
	}
	if !ValidID(a) {
		t.Fatalf("%s is not a valid id", a)
	}
	for _, bad := range []string{"", "abc", a[:23], a + "0", "ABCDEF0123456789abcdef01", "zz" + a[2:]} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
	if got := resume.WorkflowID(a); got != "entry-bulk-resume:"+a {
		t.Errorf("WorkflowID = %s", got)
	}
}

type outcome string

func (o outcome) Result() string { return string(o) }

// Progress counts skipped and error outcomes by the shared words and every other word as applied,
// and keeps at most MaxOutcomes of them.
func TestProgressCountsOutcomes(t *testing.T) {
	var p Progress[struct{}, outcome]
	p.add([]outcome{"resumed", OutcomeSkipped, OutcomeError, "redriven"})
	if p.Done != 4 || p.Applied != 2 || p.Skipped != 1 || p.Errors != 1 || len(p.Outcomes) != 4 {
		t.Fatalf("progress: %+v", p)
	}
	p.add(make([]outcome, MaxOutcomes))
	if len(p.Outcomes) != MaxOutcomes || p.Done != MaxOutcomes+4 {
		t.Fatalf("kept %d outcomes of %d", len(p.Outcomes), p.Done)
	}
}
