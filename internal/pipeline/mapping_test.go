package pipeline

import (
	"reflect"
	"testing"
)

func TestMapOutput(t *testing.T) {
	resp := map[string]any{
		"task_id": "vh123456",
		"status":  "success",
		"data": map[string]any{
			"output_url": "https://cos/out.jpg",
			"results":    []any{map[string]any{"url": "a"}, map[string]any{"url": "b"}},
		},
		"metadata": map[string]any{"duration": 3.2},
	}
	mapping := map[string]string{
		"result_url":      "$.data.output_url",
		"vendor_task_id":  "task_id",
		"processing_time": "$.metadata.duration",
		"urls":            "$.data.results[*].url",
		"whole":           "$.data.results",
		"absent":          "$.data.nothing",
		"absent_field":    "nothing",
	}
	out, missing, err := MapOutput(mapping, resp)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"result_url":      "https://cos/out.jpg",
		"vendor_task_id":  "vh123456",
		"processing_time": 3.2,
		"urls":            []any{"a", "b"},
		"whole":           resp["data"].(map[string]any)["results"],
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %#v", out)
	}
	if !reflect.DeepEqual(missing, []string{"absent", "absent_field"}) {
		t.Fatalf("missing %v", missing)
	}
}

func TestMapOutputWildcardWithNoMatchIsEmptyArray(t *testing.T) {
	out, _, err := MapOutput(map[string]string{"u": "$.items[*]"}, map[string]any{"items": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := out["u"].([]any); !ok || len(got) != 0 {
		t.Fatalf("got %#v", out["u"])
	}
}

func TestCompileOutputPathRejects(t *testing.T) {
	for _, s := range []string{"", "$.a[", "$.a[?(@.x ==", "two words"} {
		if _, err := CompileOutputPath(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
