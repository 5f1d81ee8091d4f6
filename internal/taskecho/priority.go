package taskecho

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Priority labels map onto the 1–10 numeric scale so that one index-backed sort (priority_rank
// descending) orders both kinds. TaskEcho sorted the raw mixed value, which put "high" last.
var priorityLabelRank = map[string]int{"high": 8, "medium": 5, "low": 2}

// PriorityLabelRank is a stored priority label's rank on the 1–10 scale, 0 for anything else
// (internal/taskecho/migrate ranks TaskEcho's labels with it).
func PriorityLabelRank(label string) int { return priorityLabelRank[label] }

// ParsePriority validates a priority given as JSON: null, "high"|"medium"|"low" (any case) or an
// integer 1–10. It returns the value to store (nil, a lowercase string or an int) and its rank
// (0 when absent). The error messages are TaskEcho's.
func ParsePriority(raw json.RawMessage) (value any, rank int, err error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, 0, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, 0, fmt.Errorf("priority 必须是字符串或数字")
	}
	switch x := v.(type) {
	case string:
		label := strings.ToLower(strings.TrimSpace(x))
		r, ok := priorityLabelRank[label]
		if !ok {
			return nil, 0, fmt.Errorf("priority 字符串必须是 high, medium, low 之一")
		}
		return label, r, nil
	case float64:
		if x != math.Trunc(x) || x < 1 || x > 10 {
			return nil, 0, fmt.Errorf("priority 数字必须在 1-10 之间")
		}
		return int(x), int(x), nil
	default:
		return nil, 0, fmt.Errorf("priority 必须是字符串或数字")
	}
}

// ParsePriorityFilter reads the pull filter's priority query value: a label or an integer 1–10.
// ok is false for anything else (TaskEcho ignored such values; so do we).
func ParsePriorityFilter(q string) (value any, ok bool) {
	q = strings.ToLower(strings.TrimSpace(q))
	if _, isLabel := priorityLabelRank[q]; isLabel {
		return q, true
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 || n > 10 {
		return nil, false
	}
	return n, true
}
