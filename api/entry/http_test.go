package entry_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// do sends req and reads the whole answer.
func do(t *testing.T, req *http.Request) *e2e.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return &e2e.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}
