package pipeline

import (
	"fmt"
	"strconv"
	"strings"
)

// RefRoot is what a `${...}` placeholder reads from.
type RefRoot int

// The variables an input_mapping may read (input_data, a previous step's output, task_id,
// user_id, an allow-listed env variable), plus step_index and backend_url, which
// callback_config.url uses.
const (
	RootInputData RefRoot = iota + 1
	RootStepOutput
	RootTaskID
	RootUserID
	RootEnv
	RootStepIndex
	RootBackendURL
)

// PathElem is one hop below a root: a field (Key) or an array index (Index, when IsIndex).
type PathElem struct {
	Key     string
	Index   int
	IsIndex bool
}

// Ref is a parsed placeholder expression such as `steps[0].output.result_urls[2]`.
type Ref struct {
	Root RefRoot
	Step int    // for RootStepOutput
	Env  string // for RootEnv
	Path []PathElem
	Text string // the expression as written, for messages
}

// maxRefIndex bounds array indexes so a hostile schema cannot make us allocate or loop absurdly.
const maxRefIndex = 1_000_000

// valueRoots are the placeholders that stand for one value of the task, with no path below them.
var valueRoots = map[string]RefRoot{
	"task_id": RootTaskID, "user_id": RootUserID, "step_index": RootStepIndex, "backend_url": RootBackendURL,
}

// ParseRef parses the text between `${` and `}`.
func ParseRef(expr string) (Ref, error) {
	r := Ref{Text: expr}
	if root, ok := valueRoots[expr]; ok {
		r.Root = root
		return r, nil
	}
	switch {
	case strings.HasPrefix(expr, "env."):
		name := expr[len("env."):]
		if !isEnvName(name) {
			return r, fmt.Errorf("${%s}: environment variable name must match [A-Za-z_][A-Za-z0-9_]*", expr)
		}
		r.Root, r.Env = RootEnv, name
		return r, nil
	case expr == "input_data" || strings.HasPrefix(expr, "input_data.") || strings.HasPrefix(expr, "input_data["):
		r.Root = RootInputData
		path, err := parsePath(expr[len("input_data"):])
		if err != nil {
			return r, fmt.Errorf("${%s}: %w", expr, err)
		}
		r.Path = path
		return r, nil
	case strings.HasPrefix(expr, "steps["):
		return parseStepRef(expr)
	}
	return r, fmt.Errorf("${%s}: unknown variable (use input_data.x, steps[i].output.x, task_id, user_id or env.X)", expr)
}

func parseStepRef(expr string) (Ref, error) {
	r := Ref{Text: expr, Root: RootStepOutput}
	rest := expr[len("steps["):]
	end := strings.IndexByte(rest, ']')
	if end <= 0 {
		return r, fmt.Errorf("${%s}: steps[ needs a step index and ]", expr)
	}
	idx, err := parseIndex(rest[:end])
	if err != nil {
		return r, fmt.Errorf("${%s}: step index: %w", expr, err)
	}
	r.Step = idx
	rest = rest[end+1:]
	if rest != ".output" && !strings.HasPrefix(rest, ".output.") && !strings.HasPrefix(rest, ".output[") {
		return r, fmt.Errorf("${%s}: only steps[i].output is readable", expr)
	}
	path, err := parsePath(rest[len(".output"):])
	if err != nil {
		return r, fmt.Errorf("${%s}: %w", expr, err)
	}
	r.Path = path
	return r, nil
}

// parsePath parses `.a.b[0].c` (possibly empty).
func parsePath(s string) ([]PathElem, error) {
	var out []PathElem
	for s != "" {
		switch s[0] {
		case '.':
			s = s[1:]
			n := 0
			for n < len(s) && isKeyByte(s[n]) {
				n++
			}
			if n == 0 {
				return nil, fmt.Errorf("empty or invalid field name after '.'")
			}
			out = append(out, PathElem{Key: s[:n]})
			s = s[n:]
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '['")
			}
			idx, err := parseIndex(s[1:end])
			if err != nil {
				return nil, err
			}
			out = append(out, PathElem{Index: idx, IsIndex: true})
			s = s[end+1:]
		default:
			return nil, fmt.Errorf("unexpected %q in path", s[0])
		}
	}
	return out, nil
}

func parseIndex(s string) (int, error) {
	if s == "" || len(s) > 7 {
		return 0, fmt.Errorf("index %q must be a number from 0 to %d", s, maxRefIndex)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("index %q must be a number from 0 to %d", s, maxRefIndex)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxRefIndex {
		return 0, fmt.Errorf("index %q must be a number from 0 to %d", s, maxRefIndex)
	}
	return n, nil
}

func isKeyByte(b byte) bool {
	return b == '_' || b == '-' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		ok := b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (i > 0 && b >= '0' && b <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// segment is a piece of a template string: literal text, or a placeholder.
type segment struct {
	literal string
	ref     *Ref
}

// splitTemplate splits s into literal text and placeholders. "$" not followed by "{" is literal.
func splitTemplate(s string) ([]segment, error) {
	var segs []segment
	for {
		start := strings.Index(s, "${")
		if start < 0 {
			if s != "" {
				segs = append(segs, segment{literal: s})
			}
			return segs, nil
		}
		end := strings.IndexByte(s[start:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unclosed placeholder %q (missing '}')", s[start:])
		}
		if start > 0 {
			segs = append(segs, segment{literal: s[:start]})
		}
		ref, err := ParseRef(s[start+2 : start+end])
		if err != nil {
			return nil, err
		}
		segs = append(segs, segment{ref: &ref})
		s = s[start+end+1:]
	}
}

// TemplateRefs lists every placeholder inside a mapping value (strings at any depth).
func TemplateRefs(v any) ([]Ref, error) {
	var refs []Ref
	var walk func(v any) error
	walk = func(v any) error {
		switch t := v.(type) {
		case string:
			segs, err := splitTemplate(t)
			if err != nil {
				return err
			}
			for _, s := range segs {
				if s.ref != nil {
					refs = append(refs, *s.ref)
				}
			}
		case []any:
			for _, e := range t {
				if err := walk(e); err != nil {
					return err
				}
			}
		case map[string]any:
			for _, k := range sortedKeys(t) {
				if err := walk(t[k]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return refs, walk(v)
}
