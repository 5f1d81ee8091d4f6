package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"
)

// slowWork is a wait of about two seconds whose poll reports one more of 4 units each half
// second: what pipeline run --wait sees of a pipeline's steps.
func slowWork() (poll func(context.Context) (int, int, error), wait func() error) {
	var done atomic.Int64
	start := time.Now()
	poll = func(context.Context) (int, int, error) {
		return int(min(done.Load(), 4)), 4, nil
	}
	wait = func() error {
		for done.Load() < 4 {
			time.Sleep(500 * time.Millisecond)
			done.Store(int64(time.Since(start) / (500 * time.Millisecond)))
		}
		return nil
	}
	return poll, wait
}

// TestWatchUnderTerminal: a waiting command on a terminal redraws one progress line in place,
// and the line advances to the total.
func TestWatchUnderTerminal(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchHelper$")
	cmd.Env = append(os.Environ(), "WATCH_HELPER=1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 120})
	if err != nil {
		t.Fatalf("start under a pty: %v", err)
	}
	defer tty.Close()
	var out bytes.Buffer
	var pathErr *os.PathError
	if _, err := io.Copy(&out, tty); err != nil && !errors.As(err, &pathErr) { // EIO once the child exits
		t.Fatalf("read pty: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out.String())
	}
	s := out.String()
	var seen []string
	for _, m := range regexp.MustCompile(`\((\d)/4,`).FindAllStringSubmatch(s, -1) {
		if len(seen) == 0 || seen[len(seen)-1] != m[1] {
			seen = append(seen, m[1])
		}
	}
	if len(seen) < 3 || seen[len(seen)-1] != "4" || !strings.Contains(s, "\r") {
		t.Fatalf("want one line redrawn in place advancing to 4/4, saw counts %v in %q", seen, s)
	}
}

// TestWatchHelper is the child of TestWatchUnderTerminal: watch with its stderr on the pty.
func TestWatchHelper(t *testing.T) {
	if os.Getenv("WATCH_HELPER") != "1" {
		t.Skip("helper process")
	}
	poll, wait := slowWork()
	if err := watch(context.Background(), os.Stderr, "steps", poll, wait); err != nil {
		t.Fatal(err)
	}
}

// TestWatchPlain: without a terminal the same wait prints plain lines, one per change.
func TestWatchPlain(t *testing.T) {
	var b bytes.Buffer
	poll, wait := slowWork()
	if err := watch(context.Background(), &b, "steps", poll, wait); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Contains(s, "\r") || !strings.HasPrefix(s, "steps: 0/4 (0%)") || !strings.Contains(s, "steps: 4/4 (100%) done in") {
		t.Fatalf("want plain lines from 0/4 to the closing line, got %q", s)
	}
	if n := strings.Count(s, "\n"); n < 3 {
		t.Fatalf("want a line per second of progress and the closing line, got %d: %q", n, s)
	}
}
