package feishuemu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Wire form of the search filter. Pointers tell a missing member from an empty one: Feishu
// requires "value" even as [] for isEmpty/isNotEmpty.
type wireCond struct {
	FieldName *string   `json:"field_name"`
	Operator  *string   `json:"operator"`
	Value     *[]string `json:"value"`
}

type wireFilter struct {
	Conjunction *string      `json:"conjunction"`
	Conditions  []wireCond   `json:"conditions"`
	Children    []wireFilter `json:"children"`
}

type predicate func(r *record) bool

func invalidFilter(format string, a ...any) *apiErr {
	return badReq(1254018, "InvalidFilter: "+fmt.Sprintf(format, a...))
}

// operators allowed per field type (the documented matrix).
var allowedOps = map[int][]string{
	TypeText:         {"is", "isNot", "contains", "doesNotContain", "isEmpty", "isNotEmpty"},
	TypeURL:          {"is", "isNot", "contains", "doesNotContain", "isEmpty", "isNotEmpty"},
	TypeNumber:       {"is", "isNot", "isGreater", "isGreaterEqual", "isLess", "isLessEqual", "isEmpty", "isNotEmpty"},
	TypeSingleSelect: {"is", "isNot", "contains", "doesNotContain", "isEmpty", "isNotEmpty"},
	TypeMultiSelect:  {"is", "isNot", "contains", "doesNotContain", "isEmpty", "isNotEmpty"},
	TypeDateTime:     {"is", "isEmpty", "isNotEmpty", "isGreater", "isLess"},
	TypeCreatedTime:  {"is", "isEmpty", "isNotEmpty", "isGreater", "isLess"},
	TypeCheckbox:     {"is"},
	TypeUser:         {"is", "isNot", "contains", "doesNotContain", "isEmpty", "isNotEmpty"},
}

// compileFilter turns a filter into a predicate over t's records, rejecting what Feishu
// rejects with InvalidFilter.
func compileFilter(t *table, f *wireFilter, loc *time.Location, now time.Time) (predicate, *apiErr) {
	if f == nil {
		return func(*record) bool { return true }, nil
	}
	total := len(f.Conditions)
	for _, c := range f.Children {
		if len(c.Children) > 0 {
			return nil, invalidFilter("only one level of children is allowed")
		}
		total += len(c.Conditions)
	}
	if total > 50 {
		return nil, invalidFilter("at most 50 conditions")
	}
	return compileGroup(t, f, loc, now)
}

func compileGroup(t *table, f *wireFilter, loc *time.Location, now time.Time) (predicate, *apiErr) {
	if f.Conjunction == nil || (*f.Conjunction != "and" && *f.Conjunction != "or") {
		return nil, invalidFilter("conjunction must be \"and\" or \"or\"")
	}
	var parts []predicate
	for _, c := range f.Conditions {
		p, err := compileCond(t, c, loc, now)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	for i := range f.Children {
		p, err := compileGroup(t, &f.Children[i], loc, now)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	and := *f.Conjunction == "and"
	return func(r *record) bool {
		if len(parts) == 0 {
			return true
		}
		for _, p := range parts {
			if p(r) != and {
				return !and
			}
		}
		return and
	}, nil
}

func compileCond(t *table, c wireCond, loc *time.Location, now time.Time) (predicate, *apiErr) {
	if c.FieldName == nil || c.Operator == nil {
		return nil, invalidFilter("condition needs field_name and operator")
	}
	f := t.byName[*c.FieldName]
	if f == nil {
		return nil, invalidFilter("field %q not found", *c.FieldName)
	}
	op := *c.Operator
	if !slices.Contains(allowedOps[f.typ], op) {
		return nil, invalidFilter("operator %q is not allowed on field %q", op, f.name)
	}
	if c.Value == nil {
		return nil, invalidFilter("missing value for field %q (send \"value\":[] for %s)", f.name, op)
	}
	vals := *c.Value
	if len(vals) > 10 {
		return nil, invalidFilter("at most 10 values per condition")
	}
	switch op {
	case "isEmpty", "isNotEmpty":
		if len(vals) != 0 {
			return nil, invalidFilter("%s on %q takes \"value\":[]", op, f.name)
		}
		want := op == "isEmpty"
		return func(r *record) bool { return isEmpty(r.value(f)) == want }, nil
	}
	if len(vals) == 0 {
		return nil, invalidFilter("operator %q on %q needs a value", op, f.name)
	}
	switch f.typ {
	case TypeText, TypeURL:
		return textCond(f, op, vals)
	case TypeNumber:
		return numberCond(f, op, vals)
	case TypeSingleSelect, TypeMultiSelect:
		return selectCond(f, op, vals)
	case TypeUser:
		return userCond(f, op, vals)
	case TypeDateTime, TypeCreatedTime:
		return dateCond(f, op, vals, loc, now)
	case TypeCheckbox:
		if len(vals) != 1 || (vals[0] != "true" && vals[0] != "false") {
			return nil, invalidFilter("checkbox %q takes [\"true\"] or [\"false\"]", f.name)
		}
		want := vals[0] == "true"
		return func(r *record) bool { b, _ := r.value(f).(bool); return b == want }, nil
	}
	return nil, invalidFilter("field %q cannot be filtered", f.name)
}

func cellText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any: // text segments
		var b strings.Builder
		for _, e := range x {
			m, _ := e.(map[string]any)
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
		return b.String()
	case map[string]any:
		s, _ := x["text"].(string)
		return s
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// Text comparisons: is/isNot are exact; contains/doesNotContain are case-insensitive substring
// matches, any-of for several values (Feishu's behaviour there is undocumented; this is the
// documented choice of the emulator).
func textCond(f *field, op string, vals []string) (predicate, *apiErr) {
	if (op == "is" || op == "isNot") && len(vals) != 1 {
		return nil, invalidFilter("%s on %q takes one value", op, f.name)
	}
	switch op {
	case "is":
		return func(r *record) bool { return cellText(r.value(f)) == vals[0] }, nil
	case "isNot":
		return func(r *record) bool { return cellText(r.value(f)) != vals[0] }, nil
	}
	anyOf := func(r *record) bool {
		s := strings.ToLower(cellText(r.value(f)))
		for _, v := range vals {
			if strings.Contains(s, strings.ToLower(v)) {
				return true
			}
		}
		return false
	}
	if op == "contains" {
		return anyOf, nil
	}
	return func(r *record) bool { return !anyOf(r) }, nil
}

func numberCond(f *field, op string, vals []string) (predicate, *apiErr) {
	if len(vals) != 1 {
		return nil, invalidFilter("%s on number %q takes one value", op, f.name)
	}
	want, err := strconv.ParseFloat(vals[0], 64)
	if err != nil {
		return nil, invalidFilter("value %q for number %q is not a number", vals[0], f.name)
	}
	return func(r *record) bool {
		n, ok := r.value(f).(float64)
		if op == "isNot" {
			return !ok || n != want
		}
		if !ok {
			return false
		}
		switch op {
		case "is":
			return n == want
		case "isGreater":
			return n > want
		case "isGreaterEqual":
			return n >= want
		case "isLess":
			return n < want
		default: // isLessEqual
			return n <= want
		}
	}, nil
}

// selectCond rejects values that are not options of the field: Feishu answers InvalidFilter
// for them (a table whose Status lacks the "error" option, docs/webhook.md).
func selectCond(f *field, op string, vals []string) (predicate, *apiErr) {
	for _, v := range vals {
		if !slices.Contains(f.options, v) {
			return nil, invalidFilter("option %q does not exist in field %q", v, f.name)
		}
	}
	return listCond(f, op, vals, func(r *record) []string {
		switch x := r.value(f).(type) {
		case string:
			return []string{x}
		case []any:
			out := make([]string, 0, len(x))
			for _, e := range x {
				s, _ := e.(string)
				out = append(out, s)
			}
			return out
		}
		return nil
	})
}

// userCond matches person cells by user id (filter guide: person values are user ids of the
// user_id_type kind).
func userCond(f *field, op string, vals []string) (predicate, *apiErr) {
	return listCond(f, op, vals, func(r *record) []string {
		arr, _ := r.value(f).([]any)
		out := make([]string, 0, len(arr))
		for _, e := range arr {
			m, _ := e.(map[string]any)
			id, _ := m["id"].(string)
			out = append(out, id)
		}
		return out
	})
}

// listCond compares a cell that holds a list (options, user ids): is/isNot compare the whole
// cell with one value, contains/doesNotContain look for any of the values.
func listCond(f *field, op string, vals []string, cell func(*record) []string) (predicate, *apiErr) {
	if (op == "is" || op == "isNot") && len(vals) != 1 {
		return nil, invalidFilter("%s on %q takes one value", op, f.name)
	}
	hasAny := func(r *record) bool {
		return slices.ContainsFunc(cell(r), func(c string) bool { return slices.Contains(vals, c) })
	}
	exact := func(r *record) bool { c := cell(r); return len(c) == 1 && c[0] == vals[0] }
	switch op {
	case "is":
		return exact, nil
	case "isNot":
		return func(r *record) bool { return !exact(r) }, nil
	case "contains":
		return hasAny, nil
	default:
		return func(r *record) bool { return !hasAny(r) }, nil
	}
}
