package httpx

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestTimeRange(t *testing.T) {
	from, to, err := TimeRange("since", "", "until", "")
	if err != nil || from != nil || to != nil {
		t.Fatalf("empty window: %v %v %v", from, to, err)
	}
	from, to, err = TimeRange("since", "2026-01-02T15:04:05+08:00", "until", "2026-01-02T08:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 2, 7, 4, 5, 0, time.UTC); !from.Equal(want) || from.Location() != time.UTC {
		t.Errorf("since = %v, want %v in UTC", from, want)
	}
	if to == nil || !to.Equal(time.Date(2026, 1, 2, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("until = %v", to)
	}
	for _, tc := range []struct{ since, until, field string }{
		{"yesterday", "", "since"},
		{"", "2026-01-02", "until"},
		{"2026-01-02T00:00:01Z", "2026-01-02T00:00:00Z", "until"},
	} {
		_, _, err := TimeRange("since", tc.since, "until", tc.until)
		assertFieldError(t, err, tc.field)
	}
}

// FuzzTimeRange: never panics; an accepted window is ordered, a refused one names its field.
func FuzzTimeRange(f *testing.F) {
	f.Add("2026-01-02T15:04:05Z", "2026-01-03T00:00:00+01:00")
	f.Add("", "not a time")
	f.Fuzz(func(t *testing.T, since, until string) {
		from, to, err := TimeRange("since", since, "until", until)
		if err != nil {
			var he *Error
			if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Details["field"] == nil {
				t.Fatalf("error %v is not a validation error naming its field", err)
			}
			return
		}
		if (since == "") != (from == nil) || (until == "") != (to == nil) {
			t.Fatalf("%q, %q -> %v, %v", since, until, from, to)
		}
		if from != nil && to != nil && to.Before(*from) {
			t.Fatalf("accepted until %v before since %v", to, from)
		}
	})
}

func assertFieldError(t *testing.T, err error, field string) {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) {
		t.Fatalf("want a validation error for %s, got %v", field, err)
	}
	if got := he.Details["field"]; got != field {
		t.Errorf("error names field %v, want %s (%s)", got, field, he.Message)
	}
}
