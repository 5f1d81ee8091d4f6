package webhook

import (
	"strings"
	"testing"
)

func TestParseTaskIDs(t *testing.T) {
	ids, err := ParseTaskIDs(" 123,456，123\n789 ")
	if err != nil || strings.Join(ids, "|") != "123|456|789" {
		t.Fatalf("%v %v", ids, err)
	}
	if _, err := ParseTaskIDs("12,abc"); err == nil {
		t.Fatal("non-numeric id accepted")
	}
	if got := MergeTaskIDs([]string{"100", "9"}, []string{"20", "9"}); strings.Join(got, ",") != "9,20,100" {
		t.Fatalf("merge %v", got)
	}
}

func FuzzParseTaskIDs(f *testing.F) {
	for _, s := range []string{"123,456", "1", "", " 1 ，2;3\n", "a,1", "99999999999999999999", ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := ParseTaskIDs(s)
		if err != nil {
			return
		}
		again, err := ParseTaskIDs(FormatTaskIDs(ids))
		if err != nil || strings.Join(again, ",") != strings.Join(ids, ",") {
			t.Fatalf("round trip %q → %v → %v %v", s, ids, again, err)
		}
	})
}
