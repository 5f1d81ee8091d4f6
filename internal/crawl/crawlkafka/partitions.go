package crawlkafka

import (
	"context"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// topicPartition names one partition of one topic.
type topicPartition struct {
	topic     string
	partition int32
}

// partitionWorkers is a goroutine per partition the member consumes: the
// poll loop hands each one its records of every poll, and it counts them in
// order while the loop polls again, so one partition's slow batch holds up
// none of the others. A partition's worker is stopped — its batch in flight
// finished, what is queued behind it left unmarked — before the partition is
// given up (revoked, lost or at shutdown), so no two members ever count one
// partition at once.
type partitionWorkers struct {
	process func(ctx, work context.Context, recs []*kgo.Record)

	mu   sync.Mutex
	byTP map[topicPartition]*partitionWorker
}

type partitionWorker struct {
	in     chan []*kgo.Record
	cancel context.CancelFunc
	done   chan struct{}
}

func newPartitionWorkers(process func(ctx, work context.Context, recs []*kgo.Record)) *partitionWorkers {
	return &partitionWorkers{process: process, byTP: map[topicPartition]*partitionWorker{}}
}

// feed hands one poll's records of a partition to its worker, starting it
// on the partition's first records. It waits while the worker still has an
// earlier poll queued, which keeps a slow partition from buffering without
// bound. The worker prepares no new batch once ctx ends; batches in flight
// run under work.
func (ws *partitionWorkers) feed(ctx, work context.Context, recs []*kgo.Record) {
	k := topicPartition{recs[0].Topic, recs[0].Partition}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w, ok := ws.byTP[k]
	if !ok {
		wctx, cancel := context.WithCancel(ctx)
		w = &partitionWorker{in: make(chan []*kgo.Record, 1), cancel: cancel, done: make(chan struct{})}
		ws.byTP[k] = w
		go w.run(wctx, work, ws.process)
	}
	w.in <- recs
}

func (w *partitionWorker) run(ctx, work context.Context, process func(ctx, work context.Context, recs []*kgo.Record)) {
	defer close(w.done)
	for recs := range w.in {
		if ctx.Err() == nil {
			process(ctx, work, recs)
		} // else stopped: the records stay unmarked and are redelivered
	}
}

// stop stops the workers of the given partitions and waits until each has
// finished its batch in flight.
func (ws *partitionWorkers) stop(partitions map[string][]int32) {
	ws.stopWhere(func(k topicPartition) bool { return slices.Contains(partitions[k.topic], k.partition) })
}

// stopAll stops every worker and waits until each has finished its batch in
// flight.
func (ws *partitionWorkers) stopAll() {
	ws.stopWhere(func(topicPartition) bool { return true })
}

func (ws *partitionWorkers) stopWhere(match func(topicPartition) bool) {
	ws.mu.Lock()
	var stopped []*partitionWorker
	for k, w := range ws.byTP {
		if !match(k) {
			continue
		}
		w.cancel()
		close(w.in)
		delete(ws.byTP, k)
		stopped = append(stopped, w)
	}
	ws.mu.Unlock()
	for _, w := range stopped {
		<-w.done
	}
}
