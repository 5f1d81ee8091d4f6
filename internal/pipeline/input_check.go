package pipeline

import (
	"fmt"
	"strconv"
	"strings"
)

// InputError names an input_data field a schema needs but a task did not provide.
type InputError struct {
	Field     string // e.g. "input_data.product_images"
	StepIndex int
	StepName  string
	Mapping   string // the input_mapping key that reads it
	// Message, when set, is the whole message (CheckInputShape words its own).
	Message string
}

// Is makes an InputError an ErrInvalidInput refusal.
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }

func (e *InputError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("%s is required by step %d %q (input_mapping.%s)", e.Field, e.StepIndex, e.StepName, e.Mapping)
}

// CheckInput verifies that every `${input_data...}` placeholder of the schema resolves against
// input, so a task missing a field is refused before it consumes quota instead of failing (and
// refunding) at the step that needs it.
func CheckInput(s *Schema, input map[string]any) error {
	for i, st := range s.Steps {
		for _, key := range sortedKeys(st.InputMapping) {
			refs, err := TemplateRefs(st.InputMapping[key])
			if err != nil {
				return fmt.Errorf("step %d input_mapping.%s: %w", i, key, err)
			}
			for _, r := range refs {
				if r.Root != RootInputData {
					continue
				}
				if _, err := walkPath(input, r, "input_data"); err != nil {
					return &InputError{Field: pathText(r), StepIndex: i, StepName: st.Name, Mapping: key}
				}
			}
		}
	}
	return nil
}

func pathText(r Ref) string {
	var b strings.Builder
	b.WriteString("input_data")
	for _, p := range r.Path {
		if p.IsIndex {
			b.WriteString("[" + strconv.Itoa(p.Index) + "]")
			continue
		}
		b.WriteString("." + p.Key)
	}
	return b.String()
}
