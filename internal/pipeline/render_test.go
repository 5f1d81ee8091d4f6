package pipeline

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func testScope() Scope {
	return Scope{
		TaskID: "t1", UserID: "u9", StepIndex: 2, BackendURL: "http://api",
		InputData: map[string]any{
			"input_image": "https://cos/in.jpg",
			"count":       float64(3),
			"tags":        []any{"a", "b"},
			"nested":      map[string]any{"k": []any{map[string]any{"v": true}}},
		},
		StepOutputs: []map[string]any{
			{"cutout_urls": []any{"x.png", "y.png"}},
			{"video_url": "https://cos/v.mp4"},
		},
		Env: map[string]string{"WATERMARK_URL": "https://cos/wm.png"},
	}
}

func TestRenderKeepsTypesAndInterpolates(t *testing.T) {
	in := map[string]any{
		"image_url":  "${input_data.input_image}",
		"count":      "${input_data.count}",
		"tags":       "${input_data.tags}",
		"deep":       "${input_data.nested.k[0].v}",
		"urls":       "${steps[0].output.cutout_urls}",
		"first":      "${steps[0].output.cutout_urls[1]}",
		"caption":    "task ${task_id} for ${user_id}: ${input_data.count} items ${input_data.tags}",
		"watermark":  "${env.WATERMARK_URL}",
		"operations": []any{"cutout", "${input_data.input_image}", float64(7)},
		"literal":    "costs $5 and {braces}",
	}
	out, err := RenderMapping(in, testScope())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"image_url":  "https://cos/in.jpg",
		"count":      float64(3),
		"tags":       []any{"a", "b"},
		"deep":       true,
		"urls":       []any{"x.png", "y.png"},
		"first":      "y.png",
		"caption":    `task t1 for u9: 3 items ["a","b"]`,
		"watermark":  "https://cos/wm.png",
		"operations": []any{"cutout", "https://cos/in.jpg", float64(7)},
		"literal":    "costs $5 and {braces}",
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got  %#v\nwant %#v", out, want)
	}
	if in["image_url"] != "${input_data.input_image}" {
		t.Fatal("Render modified its input")
	}
}

func TestRenderErrors(t *testing.T) {
	cases := map[string]string{
		"${env.INTERNAL_CALLBACK_SECRET}":  "not on the allow-list",
		"${input_data.missing}":            `input_data has no field "missing"`,
		"${input_data.tags[5]}":            "has no element 5",
		"${input_data.count.x}":            "input_data.count is not an object",
		"${steps[2].output.x}":             "step 2 has no output yet",
		"${steps[0].output.cutout_urls.x}": "is not an object",
		"pre ${input_data.nope} post":      `has no field "nope"`,
		"${nope}":                          "unknown variable",
		"${input_data.x":                   "unclosed placeholder",
	}
	for tmpl, want := range cases {
		_, err := Render(tmpl, testScope())
		var re *RenderError
		if !errors.As(err, &re) {
			t.Errorf("%s: want RenderError, got %v", tmpl, err)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q lacks %q", tmpl, err, want)
		}
	}
}

func TestRenderStringCallbackURL(t *testing.T) {
	got, err := RenderString("${backend_url}/api/internal/tasks/${task_id}/steps/${step_index}/callback", testScope())
	if err != nil {
		t.Fatal(err)
	}
	if got != "http://api/api/internal/tasks/t1/steps/2/callback" {
		t.Fatalf("got %s", got)
	}
}

func TestParseRef(t *testing.T) {
	good := []string{"task_id", "user_id", "env.A_1", "input_data", "input_data.a-b.c[3]", "steps[0].output", "steps[12].output.x[0].y"}
	for _, s := range good {
		if _, err := ParseRef(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := []string{"", "env.", "env.1A", "input_data.", "input_data[x]", "steps[].output", "steps[0].input", "steps[0]", "input_data..a", "steps[99999999].output"}
	for _, s := range bad {
		if _, err := ParseRef(s); err == nil {
			t.Errorf("%q: accepted", s)
		}
	}
}

func TestCheckInput(t *testing.T) {
	d := loadExample(t, "collection_video_pipeline")
	err := CheckInput(&d.Schema, map[string]any{"product_images": []any{"a"}})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "input_data.background_music" || ie.StepIndex != 1 || ie.Mapping != "audio_url" {
		t.Fatalf("got %v", err)
	}
	if err := CheckInput(&d.Schema, map[string]any{"product_images": []any{"a"}, "background_music": "m"}); err != nil {
		t.Fatal(err)
	}
}
