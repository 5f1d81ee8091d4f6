//go:build cluster

package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

var httpClient = &http.Client{Timeout: 30 * time.Second}

// answer is one HTTP answer.
type answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// decode unmarshals the answer's body into v and fails the test when it is not JSON.
func (a answer) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(a.Body, v); err != nil {
		t.Fatalf("answer %d is not the JSON expected: %v: %s", a.Status, err, a.Body)
	}
}

// request is one call: method, full URL, API key (may be empty), JSON body (nil for none) and
// extra headers.
type request struct {
	method, url, key string
	body             any
	header           map[string]string
}

// try sends r; the error is a transport failure (the process did not answer), which a fault
// test expects while a process is down.
func try(r request) (answer, error) {
	var body io.Reader
	if r.body != nil {
		raw, err := json.Marshal(r.body)
		if err != nil {
			return answer{}, err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(r.method, r.url, body)
	if err != nil {
		return answer{}, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.key != "" {
		req.Header.Set("X-API-Key", r.key)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: read the answer: %w", r.method, r.url, err)
	}
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: raw}, nil
}

// call sends r and fails the test when the process does not answer or answers another status
// than want.
func call(t testing.TB, r request, want int) answer {
	t.Helper()
	a, err := try(r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.url, err)
	}
	if a.Status != want {
		t.Fatalf("%s %s: %d %s, want %d", r.method, r.url, a.Status, a.Body, want)
	}
	return a
}

// get is call of a GET with the admin key.
func get(t testing.TB, url string, v any) {
	t.Helper()
	call(t, request{method: http.MethodGet, url: url, key: cl.adminKey}, http.StatusOK).decode(t, v)
}

// retryAfter is how long an answer asks the client to wait (Retry-After in seconds), 0 when it
// does not ask.
func retryAfter(a answer) time.Duration {
	s, err := strconv.Atoi(a.Header.Get("Retry-After"))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// eventually polls cond every 200 ms until it holds, and fails the test after timeout.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: still waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
