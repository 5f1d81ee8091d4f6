package promread

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

const exposition = `# TYPE requests counter
requests{operation="a",kind="x"} 2
requests{operation="b",kind="x"} 3
requests{operation="a",kind="y"} 5
`

func TestScrapeSumsTheSeriesThatMatch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(exposition)) }))
	defer srv.Close()
	fams, err := Scrape(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		match map[string]string
		want  float64
	}{
		{nil, 10},
		{map[string]string{"operation": "a"}, 7},
		{map[string]string{"operation": "a", "kind": "y"}, 5},
		{map[string]string{"operation": "c"}, 0},
	} {
		if got := Sum(fams["requests"], c.match); got != c.want {
			t.Errorf("Sum(requests, %v) = %v, want %v", c.match, got, c.want)
		}
	}
	if got := Sum(fams["missing"], nil); got != 0 {
		t.Errorf("Sum of a missing family = %v, want 0", got)
	}
}

func TestScrapeFailsOnAnErrorStatus(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := Scrape(context.Background(), srv.URL); err == nil {
		t.Fatal("a 404 answer scraped without an error")
	}
}
