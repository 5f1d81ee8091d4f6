package explain

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummaryJoinsAndCuts(t *testing.T) {
	if got := Summary("pipeline basic_clean@1.0.0", "", "user u1"); got != "pipeline basic_clean@1.0.0 · user u1" {
		t.Fatalf("Summary = %q", got)
	}
	long := Summary("任务"+strings.Repeat("很长", 100), "user u1")
	if len(long) > MaxSummary || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Fatalf("long summary: %d bytes, valid %v: %q", len(long), utf8.ValidString(long), long)
	}
}

func TestDetailsListsLinks(t *testing.T) {
	d := Details("Pipeline task t1.", Link{"Console", "/ui/console/pipelines/t1"})
	if !strings.Contains(d, "- Console: `/ui/console/pipelines/t1`") {
		t.Fatalf("Details = %q", d)
	}
}
