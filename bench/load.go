package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// runLoad runs op for i in [0,n) on conc goroutines and returns each call's duration, the
// wall time, and the first error with the number of failed calls.
func runLoad(ctx context.Context, n, conc int, op func(ctx context.Context, i int) error) (latencies, time.Duration, int, error) {
	lat := make(latencies, n)
	var next, failed atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				t := time.Now()
				err := op(ctx, i)
				lat[i] = time.Since(t)
				if err != nil {
					failed.Add(1)
					once.Do(func() { firstErr = err })
				}
			}
		})
	}
	wg.Wait()
	return lat, time.Since(start), int(failed.Load()), firstErr
}

// httpClient is shared so keep-alive connections are reused, as a real client would.
var httpClient = newHTTPClient(60 * time.Second)

// newHTTPClient keeps up to 64 idle connections to the API; timeout 0 means none.
func newHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
}

// call sends a JSON request with an API key and decodes a 2xx answer into out (when non-nil).
func call(ctx context.Context, method, url, key string, body, out any) (int, error) {
	return callWith(ctx, httpClient, method, url, key, body, out)
}

// callWith is call over client.
func callWith(ctx context.Context, client *http.Client, method, url, key string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, trim(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode: %w", method, url, err)
		}
	}
	return resp.StatusCode, nil
}

func trim(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
