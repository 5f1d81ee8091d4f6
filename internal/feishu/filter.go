package feishu

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Operators Feishu's record search accepts. `like` and `in` are documented as unsupported, so
// "one of several values" is expressed as an `or` group of `is` conditions (see AnyOf).
const (
	OpIs             = "is"
	OpIsNot          = "isNot"
	OpContains       = "contains"
	OpDoesNotContain = "doesNotContain"
	OpIsEmpty        = "isEmpty"
	OpIsNotEmpty     = "isNotEmpty"
	OpIsGreater      = "isGreater"
	OpIsGreaterEqual = "isGreaterEqual"
	OpIsLess         = "isLess"
	OpIsLessEqual    = "isLessEqual"
)

// Limits of the filter object documented for record search: 50 conditions, 10 values per
// condition, and a JSON filter of at most 2,000 characters (answered with 1254107
// FilterLengthExceedLimit; record search error table, open.feishu.cn bitable-v1
// app-table-record/search).
const (
	MaxConditions      = 50
	MaxConditionValues = 10
	MaxFilterChars     = 2000
)

var knownOps = map[string]bool{
	OpIs: true, OpIsNot: true, OpContains: true, OpDoesNotContain: true, OpIsEmpty: true,
	OpIsNotEmpty: true, OpIsGreater: true, OpIsGreaterEqual: true, OpIsLess: true, OpIsLessEqual: true,
}

// Condition is one filter condition. Value is always serialised, as [] when empty: Feishu
// rejects isEmpty/isNotEmpty without a value, and the SDK's own Condition type drops an empty
// slice (omitempty, larksuite/oapi-sdk-go#166), which is why searches are sent as raw bodies.
type Condition struct {
	FieldName string   `json:"field_name"`
	Operator  string   `json:"operator"`
	Value     []string `json:"value"`
}

// MarshalJSON guarantees "value":[] instead of null for empty conditions.
func (c Condition) MarshalJSON() ([]byte, error) {
	type wire Condition
	w := wire(c)
	if w.Value == nil {
		w.Value = []string{}
	}
	return json.Marshal(w)
}

// Group is one level of nested conditions (Feishu allows exactly one level of children).
type Group struct {
	Conjunction string      `json:"conjunction"`
	Conditions  []Condition `json:"conditions"`
}

// Filter is the search filter object.
type Filter struct {
	Conjunction string      `json:"conjunction"`
	Conditions  []Condition `json:"conditions,omitempty"`
	Children    []Group     `json:"children,omitempty"`
}

// Is matches a field equal to value.
func Is(field, value string) Condition { return Condition{field, OpIs, []string{value}} }

// IsNot matches a field different from value.
func IsNot(field, value string) Condition { return Condition{field, OpIsNot, []string{value}} }

// IsEmpty matches empty cells.
func IsEmpty(field string) Condition { return Condition{field, OpIsEmpty, []string{}} }

// IsNotEmpty matches non-empty cells.
func IsNotEmpty(field string) Condition { return Condition{field, OpIsNotEmpty, []string{}} }

// ExactDate matches a date cell on the day of dayStartMs in the table's time zone.
func ExactDate(field string, dayStartMs int64) Condition {
	return Condition{field, OpIs, []string{"ExactDate", strconv.FormatInt(dayStartMs, 10)}}
}

// ExactDay is ExactDate for a YYYY-MM-DD day in loc.
func ExactDay(field, day string, loc *time.Location) (Condition, error) {
	ms, err := DayStart(day, loc)
	if err != nil {
		return Condition{}, err
	}
	return ExactDate(field, ms), nil
}

// AnyOf is an `or` group of `is` conditions: the way to say "field in values" on Feishu.
func AnyOf(field string, values ...string) Group {
	g := Group{Conjunction: "or"}
	for _, v := range values {
		g.Conditions = append(g.Conditions, Is(field, v))
	}
	return g
}

// And builds an `and` filter from conditions and optional child groups.
func And(conds []Condition, children ...Group) *Filter {
	return &Filter{Conjunction: "and", Conditions: conds, Children: children}
}

// Or builds an `or` filter from conditions.
func Or(conds ...Condition) *Filter {
	return &Filter{Conjunction: "or", Conditions: conds}
}

// Validate checks the documented limits locally so a bad filter fails with a precise message
// instead of a bare InvalidFilter from the server.
func (f *Filter) Validate() error {
	if f == nil {
		return nil
	}
	if err := checkConjunction(f.Conjunction); err != nil {
		return err
	}
	total := len(f.Conditions)
	if err := checkConditions(f.Conditions); err != nil {
		return err
	}
	for i, g := range f.Children {
		if err := checkConjunction(g.Conjunction); err != nil {
			return fmt.Errorf("children[%d]: %w", i, err)
		}
		if err := checkConditions(g.Conditions); err != nil {
			return fmt.Errorf("children[%d]: %w", i, err)
		}
		total += len(g.Conditions)
	}
	if total > MaxConditions {
		return fmt.Errorf("filter has %d conditions, Feishu allows %d", total, MaxConditions)
	}
	if n := f.Length(); n > MaxFilterChars {
		return fmt.Errorf("filter is %d characters of JSON, Feishu allows %d", n, MaxFilterChars)
	}
	return nil
}

// Length is the filter's size as Feishu measures it: characters of its JSON encoding. Runes
// are counted, so a Chinese field name counts once per character (and the count is never
// smaller than what a byte-counting server would see for ASCII filters).
func (f *Filter) Length() int {
	if f == nil {
		return 0
	}
	b, err := json.Marshal(f)
	if err != nil {
		return 0
	}
	return utf8.RuneCount(b)
}

// SplitAnyOf builds the fewest filters that together say "base and field is one of values",
// each within Feishu's limits: the values go into `or` groups of `is` conditions, and a group
// is closed as soon as one more value would push the encoded filter past MaxFilterChars or
// the filter past MaxConditions. The size is measured on the encoded filter, not estimated,
// so long values, long field names and Chinese names split where they must. Duplicate values
// are sent once. It fails only when base plus a single value is already over a limit.
func SplitAnyOf(field string, values []string, base []Condition) ([]*Filter, error) {
	var out []*Filter
	var cur []string
	seen := map[string]bool{}
	for _, v := range values {
		if seen[v] {
			continue
		}
		seen[v] = true
		next := append(slices.Clone(cur), v)
		f := anyOfFilter(field, next, base)
		if f.Validate() == nil {
			cur = next
			continue
		}
		if len(cur) == 0 {
			return nil, fmt.Errorf("filter on %q: value %q alone exceeds Feishu's limits: %w", field, v, f.Validate())
		}
		out = append(out, anyOfFilter(field, cur, base))
		cur = []string{v}
		if err := anyOfFilter(field, cur, base).Validate(); err != nil {
			return nil, fmt.Errorf("filter on %q: value %q alone exceeds Feishu's limits: %w", field, v, err)
		}
	}
	if len(cur) > 0 {
		out = append(out, anyOfFilter(field, cur, base))
	}
	return out, nil
}

// anyOfFilter is base and-ed with field ∈ values; without base the `is` conditions sit at
// the top level of an `or` filter, which is shorter than a child group.
func anyOfFilter(field string, values []string, base []Condition) *Filter {
	if len(base) == 0 {
		return Or(AnyOf(field, values...).Conditions...)
	}
	return And(base, AnyOf(field, values...))
}

func checkConjunction(c string) error {
	if c != "and" && c != "or" {
		return fmt.Errorf("conjunction %q must be \"and\" or \"or\"", c)
	}
	return nil
}

func checkConditions(conds []Condition) error {
	for i, c := range conds {
		if c.FieldName == "" {
			return fmt.Errorf("condition %d: empty field_name", i)
		}
		if !knownOps[c.Operator] {
			return fmt.Errorf("condition %d on %q: unsupported operator %q", i, c.FieldName, c.Operator)
		}
		if len(c.Value) > MaxConditionValues {
			return fmt.Errorf("condition %d on %q: %d values, Feishu allows %d", i, c.FieldName, len(c.Value), MaxConditionValues)
		}
		empty := c.Operator == OpIsEmpty || c.Operator == OpIsNotEmpty
		if empty && len(c.Value) != 0 {
			return fmt.Errorf("condition %d on %q: %s takes no value", i, c.FieldName, c.Operator)
		}
		if !empty && len(c.Value) == 0 {
			return fmt.Errorf("condition %d on %q: %s needs a value", i, c.FieldName, c.Operator)
		}
	}
	return nil
}

// ParseFilter decodes a filter from its JSON wire form (used by the API's debug search and
// fuzz tests) and validates it.
func ParseFilter(data []byte) (*Filter, error) {
	var f Filter
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("decode filter: %w", err)
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}
