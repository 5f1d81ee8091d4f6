package webhook

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseTaskIDs reads the TaskIDs cell: comma-separated numeric TaskIDs ("123,456"). Chinese
// commas, spaces and newlines are tolerated because the cell is edited by hand; duplicates
// are dropped, order kept. A non-numeric id is an error: the troubleshooting guide asks for
// numeric strings and a typo would otherwise wait forever on a task that cannot exist.
func ParseTaskIDs(cell string) ([]string, error) {
	fields := strings.FieldsFunc(cell, func(r rune) bool {
		return r == ',' || r == '，' || r == ';' || r == ' ' || r == '\n' || r == '\t' || r == '\r'
	})
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		if _, err := strconv.ParseUint(f, 10, 64); err != nil {
			return nil, fmt.Errorf("TaskIDs %q: %q is not a numeric TaskID", cell, f)
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// FormatTaskIDs writes ids as the TaskIDs cell.
func FormatTaskIDs(ids []string) string { return strings.Join(ids, ",") }

// MergeTaskIDs unions id lists, deduplicated and sorted numerically, so a row's TaskIDs do not
// change with the order tasks were found in.
func MergeTaskIDs(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, id := range l {
			if id != "" && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	return out
}
