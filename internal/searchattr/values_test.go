package searchattr_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/searchattr"
	"github.com/taskloom/taskloom/internal/webhook"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
)

func TestOperationsTableIsGenerated(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := searchattr.TableIn(string(raw))
	if err != nil {
		t.Fatalf("docs/operations.md: %v", err)
	}
	if want := searchattr.Markdown(searchattr.Docs); got != want {
		t.Fatalf("the search-attribute table of docs/operations.md differs from internal/searchattr: run `go run ./internal/searchattr/gen -w docs/operations.md`\npage:\n%s\ngenerated:\n%s", got, want)
	}
}

func TestEveryRegisteredAttributeIsDocumented(t *testing.T) {
	for _, r := range searchattr.Registered {
		name, _, _ := strings.Cut(r, "=")
		if !slices.ContainsFunc(searchattr.Docs, func(d searchattr.Doc) bool { return d.Name == name }) {
			t.Errorf("%s is registered but has no row in searchattr.Docs", name)
		}
	}
}

// The values the code writes are the documented ones.
func TestCodeValuesAreDocumented(t *testing.T) {
	kinds := []string{pipelinewf.Kind, pipelinewf.HealthKind, entry.Kind, taskechowf.Kind, webhook.DeliveryKind, crawlwf.Kind}
	for _, k := range kinds {
		if !searchattr.Allowed("TaskloomKind", "", k) {
			t.Errorf("TaskloomKind %q is not documented", k)
		}
	}
	statuses := map[string][]string{
		pipelinewf.Kind:      {pipeline.StatusPending, pipeline.StatusProcessing, pipeline.StatusSuccess, pipeline.StatusFailed},
		entry.Kind:           entry.Statuses,
		webhook.DeliveryKind: {webhook.StatusPending, webhook.StatusSuccess, webhook.StatusFailed, webhook.StatusError},
		crawlwf.Kind:         {crawl.SearchStatus(crawl.Running), crawl.SearchStatus(crawl.Completed), crawl.SearchStatus(crawl.Failed)},
	}
	for kind, list := range statuses {
		for _, s := range list {
			if !searchattr.Allowed("TaskloomStatus", kind, s) {
				t.Errorf("TaskloomStatus %q of %s is not documented", s, kind)
			}
			if s != strings.ToLower(s) {
				t.Errorf("TaskloomStatus %q of %s is not lower case", s, kind)
			}
		}
	}
	for _, c := range []string{entry.ChannelHTTP, entry.ChannelTelegram, entry.ChannelCLI} {
		if !searchattr.Allowed("TaskloomChannel", entry.Kind, c) {
			t.Errorf("TaskloomChannel %q is not documented", c)
		}
	}
	for _, b := range []string{webhook.BizPiracyGeneralSearch, webhook.BizVideoScreenCapture, webhook.BizSingleURLCapture} {
		if !searchattr.Allowed("BizType", webhook.DeliveryKind, b) {
			t.Errorf("BizType %q is not documented", b)
		}
	}
	if !searchattr.Allowed("TaskloomReply", entry.Kind, entry.ReplyFailed) {
		t.Errorf("TaskloomReply %q is not documented", entry.ReplyFailed)
	}
}

// history is the part of a recorded history (temporal's JSON export) this test reads.
type history struct {
	Events []map[string]json.RawMessage `json:"events"`
}

type withAttributes struct {
	SearchAttributes struct {
		IndexedFields map[string]struct {
			Data string `json:"data"`
		} `json:"indexedFields"`
	} `json:"searchAttributes"`
}

// Every value a recorded execution set — at its start, by an upsert, or on a child it started —
// is in the table (for the execution's kind).
func TestRecordedHistoriesUseDocumentedValues(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "histories", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var h history
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		kind := ""
		for i, ev := range h.Events {
			for key, body := range ev {
				if !strings.HasSuffix(key, "Attributes") || !strings.Contains(string(body), "searchAttributes") {
					continue
				}
				var a withAttributes
				if err := json.Unmarshal(body, &a); err != nil {
					t.Fatalf("%s event %d: %v", f, i+1, err)
				}
				values := decode(t, f, a)
				evKind := kind
				if k, ok := values["TaskloomKind"]; ok {
					evKind = k
				}
				if key != "startChildWorkflowExecutionInitiatedEventAttributes" {
					kind = evKind
				}
				for name, v := range values {
					checked++
					if !searchattr.Allowed(name, evKind, v) {
						t.Errorf("%s event %d (%s): %s=%q on a %q execution is not in the search-attribute table (docs/operations.md)", filepath.Base(f), i+1, key, name, v, evKind)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no search attributes found in the recorded histories")
	}
}

// decode returns the keyword values of a (JSON payload) attribute map; non-string values are
// skipped (they are free-form: OriginalTaskId, TemporalChangeVersion).
func decode(t *testing.T, file string, a withAttributes) map[string]string {
	out := map[string]string{}
	for name, p := range a.SearchAttributes.IndexedFields {
		b, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			t.Fatalf("%s: %s: %v", file, name, err)
		}
		var s string
		if json.Unmarshal(b, &s) == nil {
			out[name] = s
		}
	}
	return out
}
