package feishu

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Text renders a cell as plain text whatever shape Feishu used for it: search and batch_get
// return text as an array of segments ({"type":"text","text":…}, mentions, links), list/get
// return a plain string, URL cells are {"link","text"}, lookups and formulas are
// {"type":n,"value":[…]}, numbers arrive as float64 and multi-selects as string arrays.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return formatNumber(x)
	case json.Number:
		return x.String()
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return joinParts(x)
	case []string:
		return strings.Join(x, ",")
	case map[string]any:
		if t, ok := x["text"]; ok {
			return Text(t)
		}
		if inner, ok := x["value"]; ok {
			return Text(inner)
		}
		if n, ok := x["name"]; ok {
			return Text(n)
		}
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// joinParts concatenates the segments of a text cell ("a", "b" → "ab") but separates whole
// values — options of a multi-select, people of a person cell, items of a lookup — with a
// comma (["x","y"] → "x,y", two people → "张三,李四"), which is how both read in the Feishu UI.
func joinParts(parts []any) string {
	segments := len(parts) > 0
	for _, p := range parts {
		if !isSegment(p) {
			segments = false
			break
		}
	}
	var b strings.Builder
	for i, p := range parts {
		if !segments && i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(Text(p))
	}
	return b.String()
}

// isSegment reports a rich-text segment ({"type":"text"|"mention"|"url",…}): the elements of
// a text cell as search and batch_get return it. Persons, groups and attachments are objects
// without a string "type".
func isSegment(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m["type"].(string)
	return ok
}

// PlainValue turns a cell into a JSON value that keeps its meaning for a receiver that does not
// know Bitable's shapes: text segments become one string (a mention as its "@name" text, a
// link segment as its text); a hyperlink (URL field) stays {"link","text"}; a person, group or
// attachment cell becomes the list of their names; a lookup or formula becomes its value;
// numbers, booleans, strings and option lists stay as they are.
func PlainValue(v any) any {
	switch x := v.(type) {
	case []any:
		if len(x) > 0 && isSegment(x[0]) {
			return Text(x)
		}
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, PlainValue(e))
		}
		return out
	case map[string]any:
		if link, ok := x["link"]; ok && !isSegment(x) {
			return map[string]any{"link": Text(link), "text": Text(x["text"])}
		}
		if inner, ok := x["value"]; ok {
			return PlainValue(inner)
		}
		if n, ok := x["name"]; ok {
			return Text(n)
		}
		return Text(x)
	case nil, string, bool, float64:
		return x
	default:
		return Text(x)
	}
}

func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// Number reads a numeric cell; text cells holding a number are accepted because tables
// created by hand often store ids and counts as text. ok is false for empty or non-numeric cells.
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case nil:
		return 0, false
	default:
		s := strings.TrimSpace(Text(v))
		if s == "" {
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		return f, true
	}
}

// Millis reads a date/created-time cell (milliseconds since the epoch).
func Millis(v any) (int64, bool) {
	f, ok := Number(v)
	if !ok || f < 0 || f > 1e16 {
		return 0, false
	}
	return int64(f), true
}
