package pipeline

import (
	"fmt"
	"strconv"
)

// MaxInputDepth bounds how deeply a task's input_data nests. The task document holds input_data
// two levels down and MongoDB refuses a document nested more than 100 levels, so a deeper input
// could never be recorded: without this check its admission would fail the same way on every
// retry. The API refuses such a body earlier (JSON depth 64); this guards every other way in.
const MaxInputDepth = 64

// CheckInputShape refuses input_data nested deeper than MaxInputDepth, naming the path where it
// goes too deep.
func CheckInputShape(input map[string]any) error {
	if path, ok := tooDeep(input, "input_data", 1); ok {
		return &InputError{Field: path, Message: fmt.Sprintf("%s nests deeper than %d levels", path, MaxInputDepth)}
	}
	return nil
}

// tooDeep reports the path of the first object or array of v that opens a level beyond
// MaxInputDepth (v itself is at depth).
func tooDeep(v any, path string, depth int) (string, bool) {
	switch x := v.(type) {
	case map[string]any:
		if depth > MaxInputDepth {
			return path, true
		}
		for _, k := range sortedKeys(x) {
			if p, ok := tooDeep(x[k], path+"."+k, depth+1); ok {
				return p, true
			}
		}
	case []any:
		if depth > MaxInputDepth {
			return path, true
		}
		for i, e := range x {
			if p, ok := tooDeep(e, path+"["+strconv.Itoa(i)+"]", depth+1); ok {
				return p, true
			}
		}
	}
	return "", false
}
