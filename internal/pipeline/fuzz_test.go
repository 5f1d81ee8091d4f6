package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRender feeds arbitrary templates and input documents to the renderer: it must never panic
// and a successful render of a placeholder-free template must return it unchanged.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"${input_data.a}", "x ${task_id} y", "${steps[0].output.v[1]}", "${env.WATERMARK_URL}",
		"${", "${}", "$${input_data.a}}", "${input_data.a[999999]}", "plain", "${steps[0].output}"} {
		f.Add(s, `{"a":[1,{"b":"c"}],"n":2.5}`)
	}
	f.Fuzz(func(t *testing.T, tmpl, input string) {
		var in any
		_ = json.Unmarshal([]byte(input), &in)
		sc := Scope{TaskID: "t", UserID: "u", StepIndex: 1, InputData: in,
			StepOutputs: []map[string]any{{"v": []any{"p", "q"}}}, Env: map[string]string{"WATERMARK_URL": "w"}}
		out, err := Render(map[string]any{"k": tmpl, "l": []any{tmpl}}, sc)
		if err != nil {
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("rendered value is not JSON: %v", err)
		}
		if segs, _ := splitTemplate(tmpl); len(segs) <= 1 && (len(segs) == 0 || segs[0].ref == nil) {
			if got := out.(map[string]any)["k"]; got != tmpl {
				t.Fatalf("literal %q came back as %#v", tmpl, got)
			}
		}
	})
}

// FuzzMapOutput feeds arbitrary paths and documents to the output mapper.
func FuzzMapOutput(f *testing.F) {
	for _, p := range []string{"$.data.output_url", "task_id", "$..x", "$.a[*].b", "$.a[0:2]", "$[?(@.x==1)]", "$.a[", "$"} {
		f.Add(p, `{"data":{"output_url":"u"},"a":[{"b":1},{"b":2}],"task_id":"v1"}`)
	}
	f.Fuzz(func(t *testing.T, path, doc string) {
		var d any
		if json.Unmarshal([]byte(doc), &d) != nil {
			return
		}
		out, _, err := MapOutput(map[string]string{"k": path}, d)
		if err != nil {
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("mapped value is not JSON: %v", err)
		}
	})
}

// FuzzParseDefinition runs arbitrary documents through parsing and validation.
func FuzzParseDefinition(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/pipelines/*.json")
	invalid, _ := filepath.Glob("../../testdata/pipelines/invalid/*.json")
	for _, file := range append(files, invalid...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDefinition(data)
		if err != nil {
			if _, ok := AsFieldError(err); !ok {
				t.Fatalf("parse error without a field: %v", err)
			}
			return
		}
		if err := ValidateDefinition(d, knownRegistry()); err != nil {
			if _, ok := AsFieldError(err); !ok {
				t.Fatalf("validation error without a field: %v", err)
			}
			return
		}
		// A valid schema's input check must not panic whatever the input.
		_ = CheckInput(&d.Schema, map[string]any{"input_image": []any{1.0}, "product_images": "x"})
	})
}
