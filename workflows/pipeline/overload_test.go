package pipeline

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// overloadedFrontend is a Temporal frontend whose every Update-With-Start fails with err, the
// way a real one answers when it cannot run the update in time or refuses the load.
type overloadedFrontend struct {
	workflowservice.UnimplementedWorkflowServiceServer
	err      error
	queryErr error
}

func (f overloadedFrontend) ExecuteMultiOperation(context.Context, *workflowservice.ExecuteMultiOperationRequest) (*workflowservice.ExecuteMultiOperationResponse, error) {
	return nil, serviceerror.ToStatus(f.err).Err() // as the server's interceptor sends it
}

func (f overloadedFrontend) QueryWorkflow(context.Context, *workflowservice.QueryWorkflowRequest) (*workflowservice.QueryWorkflowResponse, error) {
	return nil, serviceerror.ToStatus(f.queryErr).Err()
}

// clientOf is a real SDK client connected to a frontend that answers every multi-operation with
// err, so the test sees the error as the SDK shapes it.
func clientOf(t *testing.T, err, queryErr error) *Client {
	t.Helper()
	lis, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	srv := grpc.NewServer()
	workflowservice.RegisterWorkflowServiceServer(srv, overloadedFrontend{err: err, queryErr: queryErr})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, cerr := client.NewLazyClient(client.Options{HostPort: lis.Addr().String()})
	if cerr != nil {
		t.Fatal(cerr)
	}
	t.Cleanup(c.Close)
	return &Client{Temporal: c, TaskQueue: "tq"}
}

// TestStartTellsNotAdmittedInTime: an Update-With-Start that the server could not run in time
// (its update's wait hit the deadline after the start, the message the bench met under a burst
// of 4,000 creations), or that it refused for load, is ErrNotAdmittedInTime (503 + Retry-After
// at the API), never an unclassified error (500); a refusal of the request itself is not.
func TestStartTellsNotAdmittedInTime(t *testing.T) {
	t.Parallel()
	closed := serviceerror.NewMultiOperationExecution("MultiOperation could not be executed: Start failed: closed",
		[]error{serviceerror.NewWorkflowExecutionAlreadyStarted("closed", "", ""), serviceerror.NewMultiOperationAborted("Operation was aborted.")})
	for name, tc := range map[string]struct {
		err      error
		queryErr error // the admission query of a closed workflow (a late retry)
		want     bool
	}{
		"update wait hit the server's deadline": {serviceerror.NewMultiOperationExecution(
			"MultiOperation could not be executed: Update failed: context deadline exceeded",
			[]error{nil, serviceerror.NewDeadlineExceeded("context deadline exceeded")}), nil, true},
		"start refused for load": {serviceerror.NewMultiOperationExecution("MultiOperation could not be executed: Start failed: busy",
			[]error{serviceerror.NewResourceExhausted(0, "namespace rps limit"), serviceerror.NewMultiOperationAborted("Operation was aborted.")}), nil, true},
		"resource exhausted":   {serviceerror.NewResourceExhausted(0, "namespace rps limit"), nil, true},
		"frontend unavailable": {serviceerror.NewUnavailable("frontend down"), nil, true},
		"invalid request":      {serviceerror.NewInvalidArgument("bad search attribute"), nil, false},
		// A retry after the workflow closed reads its admission with a query, which needs a
		// worker; one whose slots are all busy does not poll (seen in the bench under load).
		"closed, every worker slot busy": {closed, serviceerror.NewFailedPrecondition("no poller seen for task queue recently, worker may be down"), true},
		"closed, query refused":          {closed, serviceerror.NewInvalidArgument("unknown query"), false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := clientOf(t, tc.err, tc.queryErr).Start(ctx, StartRequest{TaskID: "t1",
				TaskRequest: pipeline.TaskRequest{Pipeline: "p", UserID: "u", FeatureID: "f"}})
			if err == nil {
				t.Fatal("started against a frontend that refuses everything")
			}
			if got := errors.Is(err, ErrNotAdmittedInTime); got != tc.want {
				t.Fatalf("ErrNotAdmittedInTime = %v, want %v: %v", got, tc.want, err)
			}
		})
	}
}
