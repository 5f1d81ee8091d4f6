package taskecho

import "testing"

func TestMoveClashIsDuplicateAndMovesNothing(t *testing.T) {
	f := newFixture(t)
	if _, err := f.submit("p", "q", clientTask("dup", "pending")); err != nil {
		t.Fatal(err)
	}
	f.serverTask("p", "", "dup", nil)
	q := "q"
	_, err := f.svc.MoveTask(f.ctx, admin, TaskRef{ProjectID: "p", TaskID: "dup"}, &q)
	if !IsKind(err, KindDuplicate) {
		t.Fatalf("move onto an existing id: %v, want duplicate", err)
	}
	if _, err := f.svc.Task(f.ctx, TaskRef{ProjectID: "p", TaskID: "dup"}, false); err != nil {
		t.Fatalf("the project-level task must still be there: %v", err)
	}
}
