package progressline

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestPlainLines: written to something that is not a terminal, progress is whole lines with
// done/total, percent, rate and ETA, and a closing line.
func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, 4, "redrive")
	l.every = 0
	for i := 1; i <= 3; i++ {
		l.Set(i)
	}
	l.Done()
	l.Set(4) // after Done: nothing
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines, got %q", b.String())
	}
	if strings.Contains(b.String(), "\r") {
		t.Fatalf("plain output must not redraw: %q", b.String())
	}
	for i, want := range []string{
		`^redrive: 1/4 \(25%\) [0-9.]+/s eta \S+$`,
		`^redrive: 2/4 \(50%\) [0-9.]+/s eta \S+$`,
		`^redrive: 3/4 \(75%\) [0-9.]+/s eta \S+$`,
		`^redrive: 3/4 \(75%\) stopped after \S+$`,
	} {
		if !regexp.MustCompile(want).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i, lines[i], want)
		}
	}
}

// TestPlainLinesThrottled: a fast loop writes the first line and the last, not one per item.
func TestPlainLinesThrottled(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, 0, "migrate")
	for i := 1; i <= 1000; i++ {
		l.Set(i)
	}
	l.SetTotal(1000)
	l.Done()
	want := "migrate: 1/? 1000.0/s\n"
	if got := b.String(); !strings.HasPrefix(got, "migrate: 1/?") || !strings.HasSuffix(got, "migrate: 1000/1000 (100%) done in 0s\n") ||
		strings.Count(got, "\n") != 2 {
		t.Fatalf("got %q, want two lines like %q then the closing line", got, want)
	}
}

// TestTerminalLineAdvances runs a child process whose stdout is a pseudo-terminal: it draws one
// line redrawn in place (carriage returns, no newline until Done) whose count advances.
func TestTerminalLineAdvances(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "PROGRESS_HELPER=1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 120})
	if err != nil {
		t.Fatalf("start under a pty: %v", err)
	}
	defer tty.Close()
	var out bytes.Buffer
	_, err = io.Copy(&out, bufio.NewReader(tty))
	var pathErr *os.PathError
	if err != nil && !(errors.As(err, &pathErr)) { // EIO once the child has closed the slave
		t.Fatalf("read pty: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out.String())
	}
	s := out.String()
	if !strings.Contains(s, "\r") {
		t.Fatalf("no carriage return: the line was not redrawn in place: %q", s)
	}
	var counts []string
	for _, m := range regexp.MustCompile(`\((\d+)/5,`).FindAllStringSubmatch(s, -1) {
		if len(counts) == 0 || counts[len(counts)-1] != m[1] {
			counts = append(counts, m[1])
		}
	}
	if len(counts) < 3 || counts[len(counts)-1] != "5" {
		t.Fatalf("the line did not advance to 5/5 (counts seen %v): %q", counts, s)
	}
	if body := strings.TrimRight(s, "\r\n"); strings.Count(body, "\n") > 1 {
		t.Fatalf("a terminal gets one line, not one per step: %q", s)
	}
	if !strings.Contains(s, "step") || !regexp.MustCompile(`items/s`).MatchString(s) {
		t.Fatalf("want the label and the rate on the line: %q", s)
	}
}

// TestHelperProcess is the child of TestTerminalLineAdvances (it does nothing in a normal run).
func TestHelperProcess(t *testing.T) {
	if os.Getenv("PROGRESS_HELPER") != "1" {
		t.Skip("helper process")
	}
	l := New(os.Stdout, 5, "step")
	for i := 1; i <= 5; i++ {
		time.Sleep(150 * time.Millisecond) // past the bar's redraw throttle
		l.Set(i)
	}
	l.Done()
}
