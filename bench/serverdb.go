package main

import (
	"context"
	"errors"
	"time"

	"github.com/taskloom/taskloom/internal/promread"
)

// The Temporal server's own portable cost: the requests it made to its databases (persistence and
// visibility, every operation) per unit of work, read from the dev server's /metrics around a
// row's and its baseline's timed windows (summed over a cluster's Temporal processes). Like the MongoDB commands, they hold on any engine; they
// say whether a row's Temporal shape makes the server work harder than the bare workflow's does.

// serverPublishLag is how long the dev server may take to publish a request in its metrics (it
// reports once a second): a reading waits that long, so a window holds its own requests only.
const serverPublishLag = 1200 * time.Millisecond

// serverMeter counts the server's database requests over one window.
type serverMeter struct {
	urls   []string
	before float64
	err    error
}

func (r *run) serverMeter(ctx context.Context) *serverMeter {
	m := &serverMeter{urls: r.stack.temporalMetrics}
	m.before, m.err = serverRequests(ctx, m.urls)
	return m
}

// perUnit is the requests since the meter started over n units; 0 when they could not be read.
func (m *serverMeter) perUnit(ctx context.Context, n int) float64 {
	after, err := serverRequests(ctx, m.urls)
	if m.err != nil || err != nil || n == 0 {
		return 0
	}
	return (after - m.before) / float64(n)
}

// serverRequests is the server's database requests so far, summed over its processes, once what
// came before is published. Without an endpoint the figure is unavailable, not zero.
func serverRequests(ctx context.Context, urls []string) (float64, error) {
	if len(urls) == 0 {
		return 0, errors.New("no Temporal metrics endpoint")
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(serverPublishLag):
	}
	var n float64
	for _, url := range urls {
		fams, err := promread.Scrape(ctx, url)
		if err != nil {
			return 0, err
		}
		n += promread.Sum(fams["persistence_requests"], nil) + promread.Sum(fams["visibility_persistence_requests"], nil)
	}
	return n, nil
}

// window is what a pipeline row and its bare baseline read around their timed load besides the
// app's commands (meter): the Temporal server's database requests and each process's CPU.
type window struct {
	r   *run
	sm  *serverMeter
	cpu cpuUse
}

func (r *run) openWindow(ctx context.Context) *window {
	return &window{r: r, sm: r.serverMeter(ctx), cpu: r.cpuUse()}
}

// close returns, over n units, each process's CPU (cpuUse.perUnit) and the server's database
// requests (serverMeter.perUnit). The CPU is read first: the server's reading waits for its
// counters to be published.
func (w *window) close(ctx context.Context, n int) (cpu string, serverDB float64) {
	cpu = w.r.cpuUse().perUnit(w.cpu, n)
	return cpu, w.sm.perUnit(ctx, n)
}
