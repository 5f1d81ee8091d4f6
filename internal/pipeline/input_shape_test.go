package pipeline

import (
	"errors"
	"strings"
	"testing"
)

func nestedInput(depth int) map[string]any {
	v := map[string]any{"leaf": 1}
	for i := 1; i < depth; i++ {
		v = map[string]any{"a": v}
	}
	return v
}

func TestCheckInputShapeAcceptsTheLimit(t *testing.T) {
	if err := CheckInputShape(nestedInput(MaxInputDepth)); err != nil {
		t.Fatal(err)
	}
}

func TestCheckInputShapeNamesWhereTenThousandLevelsGoTooDeep(t *testing.T) {
	err := CheckInputShape(map[string]any{"list": []any{1, nestedInput(10_000)}})
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("a 10,000-deep input_data was accepted: %v", err)
	}
	want := "input_data.list[1]" + strings.Repeat(".a", MaxInputDepth-2)
	if ie.Field != want {
		t.Errorf("field %q, want %q", ie.Field, want)
	}
}
