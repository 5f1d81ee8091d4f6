package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// The /docs/api page lists every operation of the embedded spec, in its order, and needs no stack.
func TestAPIDocsPageListsEveryOperation(t *testing.T) {
	_, ops, err := specOperations(openapiSpec)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) < 100 {
		t.Fatalf("only %d operations read from openapi.yaml", len(ops))
	}
	if ops[0].Method != "GET" || ops[0].Path != "/healthz" || !ops[0].Public {
		t.Fatalf("first operation %+v, want the public GET /healthz the document starts with", ops[0])
	}
	h, err := apiDocs(openapiSpec)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := h(echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/docs/api", nil), rec)); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	last := -1
	for _, op := range ops {
		row := "<td class=\"m\">" + op.Method + "</td><td><code>" + op.Path + "</code>"
		i := strings.Index(body, row)
		if i < 0 {
			t.Fatalf("the page has no row for %s %s", op.Method, op.Path)
		}
		if i < last {
			t.Fatalf("%s %s is out of the document's order", op.Method, op.Path)
		}
		last = i
	}
}

func TestSpecOperationsRefusesADocumentWithoutPaths(t *testing.T) {
	if _, _, err := specOperations([]byte("openapi: 3.0.3\ninfo: {title: x}\n")); err == nil {
		t.Fatal("a document without paths must be refused")
	}
}
