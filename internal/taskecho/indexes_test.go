package taskecho

import "testing"

// The API and the worker both ensure indexes at start: the second call must be a no-op.
func TestEnsureIndexesIsIdempotent(t *testing.T) {
	f := newFixture(t) // ensures once
	if err := f.svc.EnsureIndexes(f.ctx); err != nil {
		t.Fatal(err)
	}
	specs, err := f.svc.tasks.Indexes().ListSpecifications(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range specs {
		names[s.Name] = true
	}
	for _, want := range []string{"key_unique", "source", "pulled_at", "source_pulled_at", "deleted_at", "server_modified_at", "priority", "pull_scope_order"} {
		if !names[want] {
			t.Errorf("tasks index %s missing (have %v)", want, names)
		}
	}
}
