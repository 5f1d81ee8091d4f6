package taskecho

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/testenv"
)

// seedCorpus adds every testdata/taskecho/*.json body to the fuzzer's corpus.
func seedCorpus(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "testdata/taskecho/*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed corpus under testdata/taskecho: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`not json`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[]`))
}

// FuzzParseSubmit: any body either parses into a payload that satisfies the validated
// invariants, or fails with one of the two documented error types — never a panic.
func FuzzParseSubmit(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := ParseSubmit(body, time.Unix(0, 0).UTC())
		if err != nil {
			var ve *ValidationError
			var je *ErrInvalidJSON
			if !asAny(err, &ve, &je) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			if ve != nil && len(ve.Errors) == 0 {
				t.Fatal("validation error without field errors")
			}
			return
		}
		if in.ProjectID == "" || in.QueueID == "" || len(in.Tasks) == 0 {
			t.Fatalf("accepted an incomplete payload: %+v", in)
		}
		seen := map[string]bool{}
		for _, task := range in.Tasks {
			if seen[task.ID] || task.Prompt == "" || task.Name == "" {
				t.Fatalf("accepted an invalid task: %+v", task)
			}
			seen[task.ID] = true
			if _, ok := NormalizeStatus(task.Status, ClientStatuses...); !ok {
				t.Fatalf("accepted status %q", task.Status)
			}
			for _, m := range task.Messages {
				if m.Role != "USER" && m.Role != "ASSISTANT" {
					t.Fatalf("accepted role %q", m.Role)
				}
			}
		}
	})
}

// FuzzParseTaskFields: server create/edit bodies parse into valid fields or a validation error.
func FuzzParseTaskFields(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, parse := range []func([]byte) (*TaskFields, error){ParseTaskCreate, ParseTaskEdit} {
			tf, err := parse(body)
			if err != nil {
				var ve *ValidationError
				var je *ErrInvalidJSON
				if !asAny(err, &ve, &je) {
					t.Fatalf("unexpected error type %T: %v", err, err)
				}
				continue
			}
			if tf.Status != nil {
				if _, ok := NormalizeStatus(*tf.Status, AllStatuses...); !ok {
					t.Fatalf("accepted status %q", *tf.Status)
				}
			}
			if tf.PrioritySet && tf.Priority != nil && (tf.PriorityRank < 1 || tf.PriorityRank > 10) {
				t.Fatalf("priority %v rank %d out of 1..10", tf.Priority, tf.PriorityRank)
			}
		}
	})
}

// FuzzParseIncremental: the three incremental bodies validate or fail cleanly.
func FuzzParseIncremental(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, kind := range []string{IncMessage, IncLog, IncStatus} {
			in, err := ParseIncremental(kind, body)
			if err != nil {
				continue
			}
			if in.ProjectID == "" || in.QueueID == "" || in.TaskID == "" {
				t.Fatalf("%s accepted blank ids: %+v", kind, in)
			}
			if kind == IncStatus {
				if _, ok := NormalizeStatus(in.Status, ClientStatuses...); !ok {
					t.Fatalf("accepted status %q", in.Status)
				}
			}
		}
	})
}

// FuzzParsePriority: a priority is nil, a known label or 1..10, and its rank agrees.
func FuzzParsePriority(f *testing.F) {
	for _, s := range []string{`"high"`, `"LOW"`, `"medium"`, `5`, `10`, `0`, `11`, `2.5`, `null`, `true`, `"urgent"`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, rank, err := ParsePriority(json.RawMessage(raw))
		if err != nil {
			return
		}
		switch x := v.(type) {
		case nil:
			if rank != 0 {
				t.Fatalf("nil priority with rank %d", rank)
			}
		case string:
			if priorityLabelRank[x] != rank {
				t.Fatalf("label %q rank %d", x, rank)
			}
		case int:
			if x < 1 || x > 10 || x != rank {
				t.Fatalf("number %d rank %d", x, rank)
			}
		default:
			t.Fatalf("priority of type %T", v)
		}
	})
}

// FuzzParseTime: accepted times round-trip as UTC.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05+08:00", "2026-01-02", "2026-01-02T03:04", "yesterday", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, ok := ParseTime(s)
		if ok && ts.Location() != time.UTC {
			t.Fatalf("%q parsed into %v, not UTC", s, ts.Location())
		}
	})
}

func asAny(err error, ve **ValidationError, je **ErrInvalidJSON) bool {
	switch e := err.(type) {
	case *ValidationError:
		*ve = e
		return true
	case *ErrInvalidJSON:
		*je = e
		return true
	}
	return false
}
