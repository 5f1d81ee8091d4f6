package pipeline

import (
	"fmt"
	"strings"

	"github.com/ohler55/ojg/jp"
)

// OutputPath is one compiled output_mapping value: a JSONPath (`$.data.output_url`) or a plain
// top-level field name (`result_url`), the two forms an output_mapping may use.
type OutputPath struct {
	expr  jp.Expr
	field string
	multi bool // the JSONPath can select several values (wildcard, slice, filter, union, descent)
}

// CompileOutputPath parses one output_mapping value.
func CompileOutputPath(s string) (p OutputPath, err error) {
	if s == "" {
		return p, fmt.Errorf("empty path (use $.field or a field name)")
	}
	if !strings.HasPrefix(s, "$") {
		if strings.ContainsAny(s, " \t\r\n") {
			return p, fmt.Errorf("plain field name %q must not contain spaces", s)
		}
		return OutputPath{field: s}, nil
	}
	// ojg reports most syntax errors as errors but a few malformed inputs panic inside its parser.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid JSONPath %q: %v", s, r)
		}
	}()
	x, err := jp.ParseString(s)
	if err != nil {
		return p, fmt.Errorf("invalid JSONPath %q: %w", s, err)
	}
	p.expr = x
	for _, f := range x {
		switch f.(type) {
		case jp.Wildcard, jp.Descent, jp.Union, jp.Slice, *jp.Filter:
			p.multi = true
		}
	}
	return p, nil
}

// Extract reads the path from a decoded JSON document. found is false when nothing matched;
// a multi-valued JSONPath always yields an array.
func (p OutputPath) Extract(doc any) (v any, found bool) {
	if p.expr == nil {
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		v, found = obj[p.field]
		return v, found
	}
	res := p.expr.Get(doc)
	if p.multi {
		if res == nil {
			res = []any{}
		}
		return res, true
	}
	if len(res) == 0 {
		return nil, false
	}
	return res[0], true
}

// MapOutput applies an output_mapping to a vendor response. Keys whose path matched nothing are
// left out (and listed in missing) so a later `${steps[i].output.x}` fails with a clear message
// instead of silently passing null on.
func MapOutput(mapping map[string]string, doc any) (out map[string]any, missing []string, err error) {
	out = make(map[string]any, len(mapping))
	for _, key := range sortedKeys(mapping) {
		p, err := CompileOutputPath(mapping[key])
		if err != nil {
			return nil, nil, fmt.Errorf("output_mapping.%s: %w", key, err)
		}
		v, ok := p.Extract(doc)
		if !ok {
			missing = append(missing, key)
			continue
		}
		out[key] = v
	}
	return out, missing, nil
}
