package vendorhttp

import (
	"net/http"
	"testing"
	"time"
)

var epoch = time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)

// Retry-After is delay-seconds or an HTTP-date in any of its three formats (RFC 9110 §10.2.3,
// §5.6.7); anything else is ignored.
func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{"007", 7 * time.Second, true},
		{"99999999999999999999999", time.Duration(1<<63 - 1), true}, // saturates
		{epoch.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Thursday, 26-Nov-26 01:00:30 GMT", 30 * time.Second, true}, // RFC 850
		{"Thu Nov 26 01:00:45 2026", 45 * time.Second, true},         // asctime
		{epoch.Add(-time.Hour).Format(http.TimeFormat), 0, true},     // past: now
		{"", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"3 s", 0, false},
		{"soon", 0, false},
		{"Thu, 26 Nov 2026 25:00:00 GMT", 0, false},
	} {
		got, ok := ParseRetryAfter(tc.in, epoch)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzRetryAfter: any header value parses to a non-negative wait or to "no Retry-After", never a
// panic; a value that parses keeps parsing to the same wait with surrounding blanks; a wait is
// never in the past.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "0", "-1", "1e3", "120", "18446744073709551616", "Wed, 21 Oct 2015 07:28:00 GMT",
		"Wednesday, 21-Oct-15 07:28:00 GMT", "Wed Oct 21 07:28:00 2015", epoch.Add(time.Minute).Format(http.TimeFormat), "", " ", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := ParseRetryAfter(v, epoch)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %s, %v", v, d, ok)
		}
		if d2, ok2 := ParseRetryAfter(" "+v+"\t", epoch); ok && (d2 != d || !ok2) {
			t.Fatalf("blanks changed %q: %s,%v vs %s,%v", v, d, ok, d2, ok2)
		}
	})
}
