package refusal

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

var (
	errA = errors.New("a")
	errB = errors.New("b")
	errC = errors.New("c")
)

var table = Table{
	{Type: "A", Sentinel: errA, HTTPStatus: 404},
	{Type: "B", Sentinel: errB, Retryable: true},
	{Sentinel: errC, HTTPStatus: 409}, // never crosses Temporal
}

func TestNonRetryableTypesKeepTableOrderAndSkipUntyped(t *testing.T) {
	if got := table.NonRetryableTypes(); !slices.Equal(got, []string{"A"}) {
		t.Fatalf("NonRetryableTypes = %v, want [A]", got)
	}
}

func TestOfFindsTheWrappedSentinel(t *testing.T) {
	k, ok := table.Of(fmt.Errorf("get x: %w", errC))
	if !ok || k.HTTPStatus != 409 {
		t.Fatalf("Of(wrapped errC) = %+v, %v", k, ok)
	}
	if _, ok := table.Of(errors.New("other")); ok {
		t.Fatal("Of(unrelated error) found a kind")
	}
}

func TestOfTypeIgnoresKindsWithoutAType(t *testing.T) {
	if k, ok := table.OfType("B"); !ok || !k.Retryable {
		t.Fatalf("OfType(B) = %+v, %v", k, ok)
	}
	if _, ok := table.OfType(""); ok {
		t.Fatal(`OfType("") matched a kind that never crosses Temporal`)
	}
}
