// Package progressline is the progress line of the CLI commands that wait: done of total, the rate
// and the time left. On a terminal it is one line redrawn in place (schollz/progressbar); written
// anywhere else (a pipe, a file, CI's log) it is plain lines, one per change and at most one a
// second, so a log keeps a readable record instead of carriage returns.
//
//	p := progressline.New(os.Stderr, len(ids), "redrive")
//	for i, id := range ids { …; p.Set(i + 1) }
//	p.Done()
package progressline

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// PlainInterval is the least time between two plain lines; the first and the last are always
// written.
const PlainInterval = time.Second

// Line reports the progress of one operation. Its methods are safe for concurrent use; after Done
// they do nothing.
type Line struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar // nil when w is not a terminal
	w     io.Writer
	label string
	total int
	done  int
	start time.Time
	// every is the least time between plain lines (PlainInterval; tests shorten it).
	every   time.Duration
	written time.Time // when the last plain line was written (zero: none yet)
	closed  bool
}

// New starts a progress line for total units of work (0 when the total is not known yet: a
// spinner or "?" until SetTotal) labelled label, written to w.
func New(w io.Writer, total int, label string) *Line {
	l := &Line{w: w, label: label, total: total, start: time.Now(), every: PlainInterval}
	if isTerminal(w) {
		l.bar = progressbar.NewOptions(barMax(total),
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("items"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionSetWidth(30),
		)
	}
	return l
}

// isTerminal reports whether w is a terminal (an *os.File on a tty).
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// barMax is progressbar's max for total: -1 draws a spinner while the total is unknown.
func barMax(total int) int {
	if total <= 0 {
		return -1
	}
	return total
}

// SetTotal changes the number of units (when it becomes known, or grows).
func (l *Line) SetTotal(total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || total == l.total {
		return
	}
	l.total = total
	if l.bar != nil {
		l.bar.ChangeMax(barMax(total))
		return
	}
	l.plain(false)
}

// Set records that done units are finished.
func (l *Line) Set(done int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || done == l.done {
		return
	}
	l.done = done
	if l.bar != nil {
		_ = l.bar.Set(done) // a failed write to a terminal is not the operation's failure
		return
	}
	l.plain(false)
}

// Done ends the line: the bar is completed and a newline written, or the last plain line.
func (l *Line) Done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	if l.bar != nil {
		_ = l.bar.Exit()
		fmt.Fprintln(l.w)
		return
	}
	l.plain(true)
}

// plain writes a plain line unless one was written less than l.every ago; last always writes.
func (l *Line) plain(last bool) {
	now := time.Now()
	if !last && !l.written.IsZero() && now.Sub(l.written) < l.every {
		return
	}
	l.written = now
	fmt.Fprintln(l.w, l.text(now, last))
}

// text is one plain line: "label: 40/100 (40%) 12.5/s eta 5s", and last "label: 100/100 (100%)
// done in 8s" (or "stopped after 8s" short of the total).
func (l *Line) text(now time.Time, last bool) string {
	elapsed := now.Sub(l.start)
	total, pct := "?", ""
	if l.total > 0 {
		total, pct = fmt.Sprint(l.total), fmt.Sprintf(" (%d%%)", l.done*100/l.total)
	}
	s := fmt.Sprintf("%s: %d/%s%s", l.label, l.done, total, pct)
	switch {
	case last && l.total > 0 && l.done < l.total:
		return s + " stopped after " + elapsed.Round(time.Second).String()
	case last:
		return s + " done in " + elapsed.Round(time.Second).String()
	}
	rate := float64(l.done) / max(elapsed.Seconds(), 0.001)
	s += fmt.Sprintf(" %.1f/s", rate)
	if l.total > 0 && l.done > 0 && l.done < l.total {
		eta := time.Duration(float64(l.total-l.done) / rate * float64(time.Second))
		s += " eta " + eta.Round(time.Second).String()
	}
	return s
}
