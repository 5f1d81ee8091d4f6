package main

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/mongox"
)

// opTally counts what one measured call sent: MongoDB commands (through mongox's tally), Redis
// commands (redisTally, a hook on the client) and Temporal calls (the counting wrappers below),
// each only under the call's context, so the app's other work stays out of the figure.
type opTally struct {
	mongo *mongox.Tally
	mu    sync.Mutex
	other map[string]int // "redis hmget", "temporal CountWorkflow"
}

type opTallyKey struct{}

// withOpTally returns a context whose commands and calls t counts.
func withOpTally(ctx context.Context) (context.Context, *opTally) {
	ctx, mt := mongox.WithTally(ctx)
	t := &opTally{mongo: mt, other: map[string]int{}}
	return context.WithValue(ctx, opTallyKey{}, t), t
}

func countCall(ctx context.Context, name string) {
	if t, ok := ctx.Value(opTallyKey{}).(*opTally); ok {
		t.mu.Lock()
		t.other[name]++
		t.mu.Unlock()
	}
}

// counts is every command and call by "command collection", "redis command" or "temporal call".
func (t *opTally) counts() map[string]int {
	out := map[string]int{}
	for _, c := range t.mongo.Commands() {
		out[strings.TrimSpace(c.Name+" "+c.Collection)]++ // getMore names no collection
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range t.other {
		out[k] += v
	}
	return out
}

// redisTally is a go-redis hook counting each command (a pipeline's one by one) under an opTally,
// except a new connection's handshake (hello, client setinfo, auth, select): which call opens a
// pooled connection is the pool's business, not the operation's cost.
type redisTally struct{}

var redisHandshake = map[string]bool{"hello": true, "client": true, "auth": true, "select": true}

func (redisTally) DialHook(next redis.DialHook) redis.DialHook { return next }

func (redisTally) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !redisHandshake[cmd.Name()] {
			countCall(ctx, "redis "+cmd.Name())
		}
		return next(ctx, cmd)
	}
}

func (redisTally) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if !redisHandshake[c.Name()] {
				countCall(ctx, "redis "+c.Name())
			}
		}
		return next(ctx, cmds)
	}
}

// countedVisibility passes visibility reads to Temporal, counting them.
type countedVisibility struct{ intake.Visibility }

func (v countedVisibility) CountWorkflow(ctx context.Context, req *workflowservice.CountWorkflowExecutionsRequest) (*workflowservice.CountWorkflowExecutionsResponse, error) {
	countCall(ctx, "temporal CountWorkflow")
	return v.Visibility.CountWorkflow(ctx, req)
}

func (v countedVisibility) ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	countCall(ctx, "temporal ListWorkflow")
	return v.Visibility.ListWorkflow(ctx, req)
}

// countedWorkflows passes the entry GET's Temporal calls on, counting them.
type countedWorkflows struct{ intake.Workflows }

func (w countedWorkflows) Describe(ctx context.Context, taskID string) (bool, string, error) {
	countCall(ctx, "temporal DescribeWorkflow")
	return w.Workflows.Describe(ctx, taskID)
}
