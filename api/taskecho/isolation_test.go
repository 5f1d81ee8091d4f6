package taskecho_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/auth"
)

// The push a key bound to A sent to rename project D and soft-delete its tasks: project_id names
// D for the write, PROJECT_ID names A for a case-insensitive binding check. It is refused as a
// whole, in either order, and D is untouched.
func TestBoundKeyCannotPushIntoAnotherProjectWithACaseVariantKey(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("A", "q", ctask("a", "pending")), http.StatusOK)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("D", "q", ctask("d1", "pending"), ctask("d2", "done")), http.StatusOK)
	boundA := e.NewKey(auth.PermWrite, "A")

	attack := submitBody("D", "q", ctask("x", "pending"))
	attack["project_name"] = "renamed by A"
	raw, err := json.Marshal(attack)
	if err != nil {
		t.Fatal(err)
	}
	after := string(raw[:len(raw)-1]) + `,"PROJECT_ID":"A"}`
	before := `{"PROJECT_ID":"A",` + string(raw[1:])
	for _, body := range []string{after, before} {
		res := call(t, e, http.MethodPost, "/api/v1/submit", boundA, body, http.StatusBadRequest)
		wantError(t, res, "VALIDATION_ERROR")
		// The body reader refuses the repeated key as it was spelt, whichever comes second.
		if f, _ := res.Error.Details["field"].(string); !strings.EqualFold(f, "project_id") {
			t.Fatalf("the refusal must name project_id: %+v", res.Error.Details)
		}
	}

	d := call(t, e, http.MethodGet, "/api/v1/projects/D", e.AdminKey, nil, http.StatusOK).Data
	if d["name"] != "proj D" {
		t.Fatalf("project D was renamed: %+v", d)
	}
	var ids []string
	for _, it := range call(t, e, http.MethodGet, "/api/v1/projects/D/queues/q/tasks", e.AdminKey, nil, http.StatusOK).Data["items"].([]any) {
		task := it.(map[string]any)
		if task["deleted_at"] != nil {
			t.Fatalf("task of D soft-deleted: %+v", task)
		}
		ids = append(ids, task["id"].(string))
	}
	if !slices.Equal(sorted(ids), []string{"d1", "d2"}) {
		t.Fatalf("D's queue lists %v, want d1 and d2", ids)
	}
	// The key still pushes to its own project.
	call(t, e, http.MethodPost, "/api/v1/submit", boundA, submitBody("A", "q", ctask("a", "done")), http.StatusOK)
}

// The tag list and the live totals were server-wide: a key bound to A listed B's tags and
// counted every tenant's projects. A bound key now sees its project's; an unbound key all.
func TestBoundKeySeesOnlyItsProjectInTagsAndTotals(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("A", "q", ctask("a", "pending")), http.StatusOK)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("B", "q", ctask("b1", "pending"), ctask("b2", "done")), http.StatusOK)
	call(t, e, http.MethodPut, "/api/v1/projects/A/metadata", e.AdminKey, map[string]any{"tags": []string{"shared", "a-only"}}, http.StatusOK)
	call(t, e, http.MethodPut, "/api/v1/projects/B/metadata", e.AdminKey, map[string]any{"tags": []string{"shared", "b-secret"}}, http.StatusOK)
	boundA := e.NewKey(auth.PermRead, "A")

	tags := func(key string) []string {
		var out []string
		for _, tag := range call(t, e, http.MethodGet, "/api/v1/projects/tags", key, nil, http.StatusOK).Data["tags"].([]any) {
			out = append(out, tag.(string))
		}
		return sorted(out)
	}
	if got := tags(boundA); !slices.Equal(got, []string{"a-only", "shared"}) {
		t.Fatalf("a key bound to A lists tags %v, want only A's", got)
	}
	if got := tags(e.AdminKey); !slices.Equal(got, []string{"a-only", "b-secret", "shared"}) {
		t.Fatalf("an unbound key lists tags %v, want every project's", got)
	}

	st := call(t, e, http.MethodGet, "/api/v1/stats", boundA, nil, http.StatusOK).Data
	if st["project_count"] != 1.0 || st["queue_count"] != 1.0 || st["task_count"] != 1.0 {
		t.Fatalf("a key bound to A got totals %+v, want A's (1 project, 1 queue, 1 task)", st)
	}
	if all := call(t, e, http.MethodGet, "/api/v1/stats", e.AdminKey, nil, http.StatusOK).Data; all["project_count"] != 2.0 || all["task_count"] != 3.0 {
		t.Fatalf("an unbound key got totals %+v, want every project's", all)
	}
}

// A bound admin key manages its project's keys; another project's key is answered like one that
// does not exist (404), so its id is not confirmed.
func TestBoundAdminKeySeesOtherProjectsKeysAsMissing(t *testing.T) {
	e := env(t)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("A", "q", ctask("a", "pending")), http.StatusOK)
	call(t, e, http.MethodPost, "/api/v1/submit", e.AdminKey, submitBody("B", "q", ctask("b", "pending")), http.StatusOK)
	ofB := call(t, e, http.MethodPost, "/api/v1/api-keys", e.AdminKey, map[string]any{"name": "b", "project_id": "B"}, http.StatusCreated).Data["id"].(string)
	ofA := call(t, e, http.MethodPost, "/api/v1/api-keys", e.AdminKey, map[string]any{"name": "a", "project_id": "A"}, http.StatusCreated).Data["id"].(string)
	adminA := e.NewKey(auth.PermAdmin, "A")

	call(t, e, http.MethodGet, "/api/v1/api-keys/"+ofA, adminA, nil, http.StatusOK)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		wantError(t, call(t, e, m, "/api/v1/api-keys/"+ofB, adminA, map[string]any{"is_active": false}, http.StatusNotFound), "RESOURCE_NOT_FOUND")
	}
	if b := call(t, e, http.MethodGet, "/api/v1/api-keys/"+ofB, e.AdminKey, nil, http.StatusOK).Data; b["is_active"] != true {
		t.Fatalf("B's key was changed by A's admin: %+v", b)
	}
}
