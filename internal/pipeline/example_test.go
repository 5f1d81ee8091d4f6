package pipeline

import (
	"os"
	"testing"
)

// loadExample parses one of the example pipelines under testdata/pipelines.
func loadExample(t *testing.T, name string) *Definition {
	t.Helper()
	data, err := os.ReadFile("../../testdata/pipelines/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDefinition(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
