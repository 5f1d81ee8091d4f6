package taskecho

import (
	"fmt"
	"testing"
)

// TestEveryKindHasItsRow holds each kind's answer as TaskEcho's API gives it: status, code, and
// whether a batch item names the code. Each kind has its row here and in Kinds.
func TestEveryKindHasItsRow(t *testing.T) {
	want := map[Kind]KindRow{
		KindNotFound:     {HTTPStatus: 404, Code: "RESOURCE_NOT_FOUND"},
		KindConflict:     {HTTPStatus: 409, Code: "CONFLICT", InBatch: true},
		KindGone:         {HTTPStatus: 410, Code: "GONE"},
		KindValidation:   {HTTPStatus: 400, Code: "VALIDATION_ERROR"},
		KindDuplicate:    {HTTPStatus: 409, Code: "DUPLICATE_KEY"},
		KindLeaseExpired: {HTTPStatus: 409, Code: "LEASE_EXPIRED", InBatch: true},
	}
	if len(want) != len(Kinds) {
		t.Errorf("%d kinds in the table, %d rows here: give every kind its row", len(Kinds), len(want))
	}
	for k := KindNotFound; k < kindEnd; k++ {
		if _, ok := want[k]; !ok {
			t.Errorf("kind %d has no row here: give it its row here and in Kinds", k)
		}
	}
	seen := map[Kind]bool{}
	for _, r := range Kinds {
		if seen[r.Kind] {
			t.Errorf("kind %d has two rows", r.Kind)
		}
		seen[r.Kind] = true
		w, ok := want[r.Kind]
		if w.Kind = r.Kind; !ok || r != w {
			t.Errorf("kind %d: row %+v, want %+v", r.Kind, r, w)
		}
	}
}

// TestKindOfReadsWrappedErrors: the kind of a wrapped domain error is found; another error has
// none.
func TestKindOfReadsWrappedErrors(t *testing.T) {
	if k, ok := KindOf(fmt.Errorf("release: %w", taskNotFound(nil))); !ok || k != KindNotFound {
		t.Fatalf("KindOf = %d, %v", k, ok)
	}
	if _, ok := KindOf(errContended); ok {
		t.Fatal("a plain error has a kind")
	}
}
