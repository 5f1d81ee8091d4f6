package receiver

import (
	"net/http"
	"strings"
	"testing"
)

func TestRecordsJSONAndRejectsOtherBodies(t *testing.T) {
	s, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL()+"/hook", "application/json", strings.NewReader(`{"a":1}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("post json: %v %v", err, resp)
	}
	resp.Body.Close()
	resp, err = http.Post(s.URL()+"/hook", "text/plain", strings.NewReader(`nope`))
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("post text: %v %v", err, resp)
	}
	resp.Body.Close()
	got := s.Received()
	if len(got) != 1 || got[0].Path != "/hook" || string(got[0].Body) != `{"a":1}` {
		t.Fatalf("received %+v", got)
	}
}
