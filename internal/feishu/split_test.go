package feishu

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// valuesOf returns the `is` values of field in f, in order.
func valuesOf(f *Filter, field string) []string {
	var out []string
	conds := f.Conditions
	for _, g := range f.Children {
		conds = append(conds, g.Conditions...)
	}
	for _, c := range conds {
		if c.FieldName == field && c.Operator == OpIs {
			out = append(out, c.Value...)
		}
	}
	return out
}

// Filters that were once sent whole: 40 four-digit TaskIDs made a 2,361-character filter, 44
// recordings one of 2,748 characters. Split, every filter is within the limits and together they name each
// value exactly once.
func TestSplitAnyOfRespectsTheLengthLimit(t *testing.T) {
	base := []Condition{Is("BizType", "video_screen_capture")}
	for _, n := range []int{1, 34, 40, 44, 60, 200, 10000} {
		var ids []string
		for i := range n {
			ids = append(ids, fmt.Sprint(1000+i))
		}
		for _, b := range [][]Condition{nil, base} {
			filters, err := SplitAnyOf("TaskIDs", ids, b)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range filters {
				if err := f.Validate(); err != nil || f.Length() > MaxFilterChars {
					t.Fatalf("%d ids: filter of %d chars: %v", n, f.Length(), err)
				}
				got = append(got, valuesOf(f, "TaskIDs")...)
			}
			if !slices.Equal(got, ids) {
				t.Fatalf("%d ids: split lost or reordered values", n)
			}
			if n == 40 && len(filters) < 2 {
				t.Fatalf("40 ids in one filter of %d chars", filters[0].Length())
			}
		}
	}
}

// A value too long for any filter is an error naming it, not an endless retry.
func TestSplitAnyOfRejectsAnOversizedValue(t *testing.T) {
	_, err := SplitAnyOf("TaskIDs", []string{"1", strings.Repeat("9", 2100)}, nil)
	if err == nil || !strings.Contains(err.Error(), "alone exceeds") {
		t.Fatalf("err = %v", err)
	}
}

// Length counts characters, not bytes: Feishu's limit is "2,000 characters".
func TestFilterLengthCountsCharacters(t *testing.T) {
	f := And([]Condition{Is("短剧 ID", "一")})
	b, _ := json.Marshal(f)
	if f.Length() >= len(b) || f.Length() != len([]rune(string(b))) {
		t.Fatalf("length %d of %d bytes", f.Length(), len(b))
	}
}

func FuzzSplitAnyOf(f *testing.F) {
	f.Add("TaskID", "1,2,3", 0)
	f.Add("短剧 ID", strings.Repeat("123456789,", 300), 2)
	f.Add("X", ",,a,a,"+strings.Repeat("z", 1900), 1)
	f.Add("TaskIDs", strings.Repeat("99999999999999999999,", 120), 48)
	f.Fuzz(func(t *testing.T, field, joined string, nbase int) {
		if field == "" || nbase < 0 || nbase > 60 {
			return
		}
		values := strings.Split(joined, ",")
		var base []Condition
		for i := range nbase {
			base = append(base, Is(fmt.Sprintf("B%d", i), "v"))
		}
		filters, err := SplitAnyOf(field, values, base)
		if err != nil {
			return // base alone or one value over a limit
		}
		var got []string
		for _, flt := range filters {
			if err := flt.Validate(); err != nil {
				t.Fatalf("invalid split filter: %v", err)
			}
			got = append(got, valuesOf(flt, field)...)
		}
		var want []string
		for _, v := range values {
			if !slices.Contains(want, v) {
				want = append(want, v)
			}
		}
		if nbase == 0 || !slices.ContainsFunc(base, func(c Condition) bool { return c.FieldName == field }) {
			if !slices.Equal(got, want) {
				t.Fatalf("values %q split into %q", want, got)
			}
		}
	})
}
