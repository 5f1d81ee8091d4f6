package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/taskloom/taskloom/internal/pipeline"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// renderAs runs render for v with -o format and returns what it printed.
func renderAs(t *testing.T, format string, v any) string {
	t.Helper()
	root := Root()
	var out bytes.Buffer
	root.SetOut(&out)
	if err := root.PersistentFlags().Set(flagOutput, format); err != nil {
		t.Fatal(err)
	}
	if err := checkOutput(root); err != nil {
		t.Fatal(err)
	}
	if err := render(root, v); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

type sampleStep struct {
	StepIndex int    `json:"step_index"`
	Status    string `json:"status"`
}

type sampleTask struct {
	TaskID    string         `json:"task_id"`
	InputData map[string]any `json:"input_data"`
	Steps     []sampleStep   `json:"steps"`
}

func TestOutputJSONIsTheAPIsJSON(t *testing.T) {
	got := renderAs(t, "json", sampleTask{TaskID: "t1", InputData: map[string]any{"a": 1}, Steps: []sampleStep{{0, "success"}}})
	want := "{\n  \"task_id\": \"t1\",\n  \"input_data\": {\n    \"a\": 1\n  },\n  \"steps\": [\n    {\n      \"step_index\": 0,\n      \"status\": \"success\"\n    }\n  ]\n}\n"
	if got != want {
		t.Fatalf("-o json:\n%s\nwant:\n%s", got, want)
	}
}

func TestOutputTable(t *testing.T) {
	got := renderAs(t, "table", sampleTask{TaskID: "t1", InputData: map[string]any{"a": 1}, Steps: []sampleStep{{0, "success"}, {1, "failed"}}})
	want := "TASK_ID     t1\nINPUT_DATA  {\"a\":1}\n\nSTEPS\nSTEP_INDEX  STATUS\n0           success\n1           failed\n"
	if got != want {
		t.Fatalf("-o table:\n%q\nwant:\n%q", got, want)
	}
	list := renderAs(t, "table", []map[string]any{{"taskId": "a", "status": nil}})
	if list != "STATUS  TASK_ID\n-       a\n" { // a map's keys in JSON's (sorted) order
		t.Fatalf("-o table of a list: %q", list)
	}
}

func TestUnknownOutputIsRefused(t *testing.T) {
	root := Root()
	root.SetArgs([]string{"schedules", "list", "-o", "yaml"})
	root.SetOut(new(bytes.Buffer))
	err := root.Execute()
	if err == nil || err.Error() != `-o "yaml": want json or table` {
		t.Fatalf("-o yaml: %v", err)
	}
}

func TestErrorsAreOneSentenceNamingTheThing(t *testing.T) {
	notFound := fmt.Errorf("pipeline nope@latest: not found: %w", pipeline.ErrNotFound)
	cases := []struct {
		err  error
		req  pipelinewf.StartRequest
		want string
	}{
		{notFound, pipelinewf.StartRequest{TaskRequest: pipeline.TaskRequest{Pipeline: "nope"}}, `pipeline "nope" not found`},
		{notFound, pipelinewf.StartRequest{TaskRequest: pipeline.TaskRequest{Pipeline: "p", Version: "9"}}, `pipeline "p" version "9" not found`},
	}
	for _, c := range cases {
		if got := startError(c.err, c.req).Error(); got != c.want {
			t.Errorf("startError = %q, want %q", got, c.want)
		}
	}
	app := temporal.NewApplicationError("parent task 42 not found in the task table", "NotFound")
	chain := fmt.Errorf("workflow execution error: activity error: %w", fmt.Errorf("wrapped: %w", app))
	if got := rootCause(chain).Error(); got != "parent task 42 not found in the task table" {
		t.Errorf("rootCause = %q", got)
	}
	if got := rootCause(fmt.Errorf("a: %w", errors.New("b"))).Error(); got != "b" {
		t.Errorf("rootCause of a plain chain = %q", got)
	}
}

func TestDevEnvFillsOnlyUnsetVariables(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll(filepath.Join(dir, ".data"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := "# written by make dev\nREADME_TEST_A='mongodb://127.0.0.1:27017/'\nREADME_TEST_B='it'\\''s'\nREADME_TEST_C='from file'\n"
	if err := os.WriteFile(filepath.Join(dir, DevEnvFile), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TASKLOOM_ENV", "")
	t.Setenv("README_TEST_C", "from the environment")
	for _, k := range []string{"README_TEST_A", "README_TEST_B"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	file, err := loadDevEnv()
	if err != nil || file != DevEnvFile {
		t.Fatalf("loadDevEnv = %q, %v", file, err)
	}
	for k, want := range map[string]string{"README_TEST_A": "mongodb://127.0.0.1:27017/", "README_TEST_B": "it's", "README_TEST_C": "from the environment"} {
		if got := os.Getenv(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	t.Setenv("TASKLOOM_ENV", "prod")
	os.Unsetenv("README_TEST_A")
	if file, _ := loadDevEnv(); file != "" || os.Getenv("README_TEST_A") != "" {
		t.Fatalf("prod read %q", file)
	}
}

func TestOnlyServersLogWithoutV(t *testing.T) {
	root := Root()
	servers := map[string]bool{"api": true, "worker": true, "codec-server": true}
	for name := range servers {
		c, _, err := root.Find([]string{name})
		if err != nil || c.Annotations[alwaysLogs] == "" {
			t.Errorf("%s does not log without -v", name)
		}
	}
	var quiet []string
	for _, c := range root.Commands() {
		if c.Annotations[alwaysLogs] != "" && !servers[c.Name()] {
			quiet = append(quiet, c.Name())
		}
	}
	if len(quiet) > 0 {
		t.Errorf("commands that log without -v: %s", strings.Join(quiet, ", "))
	}
}

func TestUnreachableServersNameTheDevEnv(t *testing.T) {
	ctx := withDevEnv(context.Background(), DevEnvFile)
	down := fmt.Errorf("count api keys: %w", context.DeadlineExceeded)
	if got := explainDevEnv(ctx, down).Error(); !strings.HasSuffix(got, "(addresses from .data/dev.env: is make dev running?)") {
		t.Errorf("unreachable server: %q", got)
	}
	other := errors.New(`pipeline "nope" not found`)
	if got := explainDevEnv(ctx, other); got != other {
		t.Errorf("other error changed: %q", got)
	}
	if got := explainDevEnv(context.Background(), down); got != down {
		t.Errorf("without dev.env: %q", got)
	}
}
