package pipeline

import (
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/refusal/refusaltest"
)

// TestRefuseKeepsOtherErrorsRetryable: Refuse types an error that wraps a kind's sentinel and
// leaves any other error as it is, for the activity's retry policy to retry.
func TestRefuseKeepsOtherErrorsRetryable(t *testing.T) {
	var ae *temporal.ApplicationError
	err := Refuse(fmt.Errorf("charge t1: %w", ErrQuotaExhausted))
	if !errors.As(err, &ae) || ae.Type() != ErrTypeQuotaExhausted || !ae.NonRetryable() || ae.Message() != "charge t1: quota exhausted" {
		t.Fatalf("Refuse(quota exhausted) = %#v", err)
	}
	other := errors.New("mongo: connection reset")
	if got := Refuse(other); got != other {
		t.Fatalf("Refuse(%v) = %v, want it unchanged", other, got)
	}
	if !errors.Is(&InputError{Field: "input_data.a", Message: "missing"}, ErrInvalidInput) {
		t.Fatal("an InputError is not an ErrInvalidInput refusal")
	}
}

// TestEveryDeclaredRefusalHasARow: each error type and sentinel refusals.go declares is a row of
// Refusals (a kind without its row would be raised as an ordinary, retried error).
func TestEveryDeclaredRefusalHasARow(t *testing.T) {
	refusaltest.EveryDeclaredKindHasARow(t, Refusals, "refusals.go")
}
