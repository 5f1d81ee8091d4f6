package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// knownRegistry is the provider and function set the example pipelines use.
func knownRegistry() Lookup {
	providers := map[string]bool{"tencent_cloud_infinite": true, "aliyun_image_ai": true, "runninghub": true,
		"stable_diffusion_api": true, "tencent_cloud_vod": true}
	return Lookup{
		ProviderExists: func(ref string) bool { return providers[ref] },
		FunctionExists: func(name string) bool { return name == "video-compositor" },
	}
}

func TestExamplePipelinesAreValid(t *testing.T) {
	files, err := filepath.Glob("../../testdata/pipelines/*.json")
	if err != nil || len(files) != 3 {
		t.Fatalf("want the three example pipelines, got %v (%v)", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, err := ParseDefinition(data)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if err := ValidateDefinition(d, knownRegistry()); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if d.Version != "1.0.0" || len(d.Schema.Steps) == 0 {
				t.Fatalf("unexpected definition %+v", d)
			}
		})
	}
}

// TestInvalidSchemas checks every case in testdata/pipelines/invalid: NAME.json must be rejected
// with an error containing the text of NAME.want (which names the step and the field).
func TestInvalidSchemas(t *testing.T) {
	files, err := filepath.Glob("../../testdata/pipelines/invalid/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid cases: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".want")
			if err != nil {
				t.Fatalf("every invalid case needs a .want file: %v", err)
			}
			d, err := ParseDefinition(data)
			if err == nil {
				err = ValidateDefinition(d, knownRegistry())
			}
			if err == nil {
				t.Fatal("accepted an invalid schema")
			}
			if !strings.Contains(err.Error(), strings.TrimSpace(string(want))) {
				t.Fatalf("error %q\ndoes not contain %q", err, strings.TrimSpace(string(want)))
			}
			if _, ok := AsFieldError(err); !ok {
				t.Fatalf("error %T does not carry a field", err)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	s := &Schema{Steps: []Step{
		{Name: "a", Type: StepSyncAPI, InputMapping: map[string]any{}, OutputMapping: map[string]string{}},
		{Name: "b", Type: StepSCF, InputMapping: map[string]any{}},
	}}
	err := Validate(s, Lookup{})
	ve, ok := err.(*ValidationError)
	if !ok {
		t.Fatalf("want *ValidationError, got %v", err)
	}
	var paths []string
	for _, p := range ve.Problems {
		paths = append(paths, p.Path())
	}
	got := strings.Join(paths, ",")
	for _, want := range []string{"steps[0].provider_ref", "steps[0].endpoint", "steps[1].scf_function", "steps[1].output_mapping"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %s lack %s", got, want)
		}
	}
}

func TestCandidatesFallsBackToProviderRef(t *testing.T) {
	if got := (Step{ProviderRef: "x"}).Candidates(); len(got) != 1 || got[0] != "x" {
		t.Fatalf("got %v", got)
	}
	if got := (Step{ProviderRef: "x", ProviderCandidates: []string{"x", "y"}}).Candidates(); len(got) != 2 {
		t.Fatalf("got %v", got)
	}
}
