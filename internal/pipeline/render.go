package pipeline

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Scope is everything an input_mapping may read while one step of one task is rendered.
type Scope struct {
	TaskID      string
	UserID      string
	StepIndex   int
	InputData   any              // the task's input_data (JSON-decoded)
	StepOutputs []map[string]any // outputs of the steps before StepIndex, by index
	BackendURL  string
	// Env holds only the variables on the configured allow-list that are set, so a schema can
	// never read a secret such as INTERNAL_CALLBACK_SECRET.
	Env map[string]string
}

// RenderError is a mapping that cannot be resolved for this task (a missing input field, an
// env variable off the allow-list). Retrying or switching provider cannot fix it.
type RenderError struct {
	Ref string
	Msg string
}

func (e *RenderError) Error() string { return fmt.Sprintf("${%s}: %s", e.Ref, e.Msg) }

// Render resolves every placeholder inside v (strings at any depth of objects and arrays).
// A string that is exactly one placeholder becomes the referenced value with its JSON type;
// a placeholder inside a longer string is interpolated as text (non-strings as their JSON).
// v is not modified.
func Render(v any, sc Scope) (any, error) {
	switch t := v.(type) {
	case string:
		return renderString(t, sc)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := Render(e, sc)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range sortedKeys(t) {
			r, err := Render(t[k], sc)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

// RenderMapping renders an input_mapping object.
func RenderMapping(m map[string]any, sc Scope) (map[string]any, error) {
	out, err := Render(m, sc)
	if err != nil {
		return nil, err
	}
	if out == nil {
		return map[string]any{}, nil
	}
	return out.(map[string]any), nil
}

// RenderString renders a template that must produce text (a URL, a header value).
func RenderString(s string, sc Scope) (string, error) {
	segs, err := splitTemplate(s)
	if err != nil {
		return "", &RenderError{Ref: s, Msg: err.Error()}
	}
	return interpolate(segs, sc)
}

func renderString(s string, sc Scope) (any, error) {
	segs, err := splitTemplate(s)
	if err != nil {
		return nil, &RenderError{Ref: s, Msg: err.Error()}
	}
	if len(segs) == 1 && segs[0].ref != nil {
		return resolve(*segs[0].ref, sc)
	}
	return interpolate(segs, sc)
}

func interpolate(segs []segment, sc Scope) (string, error) {
	var b strings.Builder
	for _, s := range segs {
		if s.ref == nil {
			b.WriteString(s.literal)
			continue
		}
		v, err := resolve(*s.ref, sc)
		if err != nil {
			return "", err
		}
		if str, ok := v.(string); ok {
			b.WriteString(str)
			continue
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return "", &RenderError{Ref: s.ref.Text, Msg: "value cannot be written as text: " + err.Error()}
		}
		b.Write(enc)
	}
	return b.String(), nil
}

func resolve(r Ref, sc Scope) (any, error) {
	switch r.Root {
	case RootTaskID:
		return sc.TaskID, nil
	case RootUserID:
		return sc.UserID, nil
	case RootStepIndex:
		return float64(sc.StepIndex), nil
	case RootBackendURL:
		return sc.BackendURL, nil
	case RootEnv:
		v, ok := sc.Env[r.Env]
		if !ok {
			return nil, &RenderError{Ref: r.Text, Msg: fmt.Sprintf(
				"environment variable %s is not on the allow-list (PIPELINE_ENV_ALLOWLIST) or is unset", r.Env)}
		}
		return v, nil
	case RootInputData:
		return walkPath(sc.InputData, r, "input_data")
	case RootStepOutput:
		if r.Step >= sc.StepIndex || r.Step >= len(sc.StepOutputs) {
			return nil, &RenderError{Ref: r.Text, Msg: fmt.Sprintf("step %d has no output yet (this is step %d)", r.Step, sc.StepIndex)}
		}
		return walkPath(sc.StepOutputs[r.Step], r, fmt.Sprintf("steps[%d].output", r.Step))
	}
	return nil, &RenderError{Ref: r.Text, Msg: "unknown variable"}
}

func walkPath(v any, r Ref, where string) (any, error) {
	cur := v
	for _, p := range r.Path {
		if p.IsIndex {
			arr, ok := cur.([]any)
			if !ok {
				return nil, &RenderError{Ref: r.Text, Msg: fmt.Sprintf("%s is not an array", where)}
			}
			if p.Index >= len(arr) {
				return nil, &RenderError{Ref: r.Text, Msg: fmt.Sprintf("%s has no element %d", where, p.Index)}
			}
			cur = arr[p.Index]
			where += "[" + strconv.Itoa(p.Index) + "]"
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, &RenderError{Ref: r.Text, Msg: fmt.Sprintf("%s is not an object", where)}
		}
		next, ok := obj[p.Key]
		if !ok {
			return nil, &RenderError{Ref: r.Text, Msg: fmt.Sprintf("%s has no field %q", where, p.Key)}
		}
		cur = next
		where += "." + p.Key
	}
	return cur, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
