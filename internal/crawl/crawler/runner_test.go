package crawler

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCrawlerRunnerExitAndLastLines(t *testing.T) {
	r := Runner{KeepLines: 3}
	res, err := r.Run(context.Background(), []string{"sh", "-c", `for i in 1 2 3 4 5; do echo line $i; done; echo oops >&2; exit 3`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Lines != 6 || strings.Join(res.LastLines, "|") != "line 4|line 5|oops" {
		t.Fatalf("result = %+v", res)
	}
}

func TestCrawlerRunnerHeartbeatsAndEnv(t *testing.T) {
	var beats atomic.Int32
	r := Runner{HeartbeatEvery: 20 * time.Millisecond, Heartbeat: func(int, string) { beats.Add(1) }}
	res, err := r.Run(context.Background(), []string{"sh", "-c", `echo "$CRAWL_TEST_VAR"; sleep 0.2`}, []string{"CRAWL_TEST_VAR=hello"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || len(res.LastLines) != 1 || res.LastLines[0] != "hello" {
		t.Fatalf("result = %+v", res)
	}
	if beats.Load() < 2 {
		t.Fatalf("heartbeats = %d, want several over 200ms", beats.Load())
	}
}

func TestCrawlerRunnerCancelKillsProcessGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	// The child sleep would keep the pipe open if only sh were killed.
	_, err := Runner{}.Run(ctx, []string{"sh", "-c", `sleep 30 & wait`}, nil)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
}

func TestCrawlerRunnerMissingBinary(t *testing.T) {
	if _, err := (Runner{}).Run(context.Background(), []string{"/nonexistent/crawler"}, nil); err == nil {
		t.Fatal("want a start error")
	}
}
