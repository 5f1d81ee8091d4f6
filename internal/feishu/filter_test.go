package feishu

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestConditionAlwaysSendsValue(t *testing.T) {
	f := And([]Condition{IsEmpty("ItemID"), {FieldName: "X", Operator: OpIsNotEmpty}}, AnyOf("Status", "pending", "failed"))
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Count(s, `"value":[]`) != 2 {
		t.Fatalf("empty conditions must carry \"value\":[], got %s", s)
	}
	if !strings.Contains(s, `"children":[{"conjunction":"or","conditions":[{"field_name":"Status","operator":"is","value":["pending"]}`) {
		t.Fatalf("unexpected children encoding: %s", s)
	}
}

func TestExactDayUsesTableTimeZone(t *testing.T) {
	sh, _ := time.LoadLocation(DefaultTimeZone)
	c, err := ExactDay("Date", "2025-12-17", sh)
	if err != nil {
		t.Fatal(err)
	}
	// 2025-12-17 00:00 +08:00 == 2025-12-16T16:00:00Z
	if c.Value[0] != "ExactDate" || c.Value[1] != "1765900800000" {
		t.Fatalf("ExactDay = %v", c.Value)
	}
	if DayOf(1765900800000, sh) != "2025-12-17" || DayOf(1765900800000, time.UTC) != "2025-12-16" {
		t.Fatal("DayOf must format in the given zone")
	}
	if _, err := ExactDay("Date", "17/12/2025", sh); err == nil {
		t.Fatal("bad day accepted")
	}
}

func TestValidate(t *testing.T) {
	many := make([]string, 11)
	bad := []*Filter{
		{Conjunction: "xor"},
		And([]Condition{{FieldName: "A", Operator: "like", Value: []string{"x"}}}),
		And([]Condition{{FieldName: "A", Operator: OpIs}}),
		And([]Condition{{FieldName: "A", Operator: OpIs, Value: many}}),
		And([]Condition{{FieldName: "A", Operator: OpIsEmpty, Value: []string{"x"}}}),
		And(nil, Group{Conjunction: "or", Conditions: make([]Condition, 51)}),
	}
	for i, f := range bad {
		if f.Validate() == nil {
			t.Errorf("filter %d should be invalid", i)
		}
	}
	if err := And([]Condition{Is("A", "1")}, AnyOf("B", "x", "y")).Validate(); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		`{"conjunction":"and","conditions":[{"field_name":"Status","operator":"is","value":["pending"]}]}`,
		`{"conjunction":"or","children":[{"conjunction":"or","conditions":[{"field_name":"A","operator":"isEmpty","value":[]}]}]}`,
		`{"conjunction":"and","conditions":[{"field_name":"Date","operator":"is","value":["ExactDate","1765900800000"]}]}`,
		`{}`, `[]`, `{"conjunction":"and","conditions":[{"field_name":"","operator":"is"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		flt, err := ParseFilter(data)
		if err != nil {
			return
		}
		b, err := json.Marshal(flt)
		if err != nil {
			t.Fatalf("marshal valid filter: %v", err)
		}
		again, err := ParseFilter(b)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Fatalf("not stable: %s vs %s", b, b2)
		}
		for _, c := range flt.Conditions {
			if c.Operator == OpIsEmpty && !strings.Contains(string(b), `"value":[]`) {
				t.Fatalf("isEmpty without value: %s", b)
			}
		}
	})
}
