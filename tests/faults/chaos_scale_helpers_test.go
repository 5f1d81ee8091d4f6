//go:build chaos

package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
)

// terminate sends SIGTERM (what an orchestrator sends on a rolling update) and waits for the
// process to exit; it fails the test when the process is still running after grace.
func (w *workerProc) terminate(t *testing.T, grace time.Duration) {
	t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(grace):
		t.Fatalf("process %d still running %s after SIGTERM", w.cmd.Process.Pid, grace)
	}
}

// runStarter runs one `starter` command with exactly cfg to its end and returns its output.
func runStarter(t *testing.T, cfg *config.Config, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, starterBinary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, configEnv(t, cfg)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("starter %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// scaleClient talks to the API processes without keep-alive: every request opens its own
// connection, so a request is either refused (the process is down) or served to its end by a
// process shutting down gracefully — never written into a connection the server is closing.
var scaleClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// sendJSON sends one request with key and body (JSON; none when nil); nil when the API could
// not be reached.
func sendJSON(t *testing.T, method, url, key string, body any) *http.Response {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Errorf("encode %s %s: %v", method, url, err)
			return nil
		}
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(raw))
	if err != nil {
		t.Errorf("request %s %s: %v", method, url, err)
		return nil
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", key)
	resp, err := scaleClient.Do(req)
	if err != nil {
		return nil
	}
	return resp
}

// retryJSON sends the request until it is answered with one of ok (decoded into out) and
// reports whether it was. Transport errors (over scaleClient, a refused connection while the
// process is down), 429 and 5xx are retried, as a client with an idempotency key may; a pull
// refused at connect claimed nothing, so retrying it hands nothing out twice. Anything else fails
// the test.
func retryJSON(t *testing.T, method, url, key string, body, out any, ok ...int) bool {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp := sendJSON(t, method, url, key, body)
		if resp == nil || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			if resp != nil {
				resp.Body.Close()
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		defer resp.Body.Close()
		if !slices.Contains(ok, resp.StatusCode) {
			var msg bytes.Buffer
			_, _ = msg.ReadFrom(resp.Body)
			t.Errorf("%s %s: status %d %s", method, url, resp.StatusCode, msg.String())
			return false
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Errorf("%s %s: answer is not JSON: %v", method, url, err)
			return false
		}
		return true
	}
	t.Errorf("%s %s: no answer within 2 minutes", method, url)
	return false
}

// applyWithRetry posts an entry WorkflowApplyRequest whose context carries key, retrying with the
// same key, and returns the entry task id.
func applyWithRetry(t *testing.T, url, apiKey, key string, body map[string]any) string {
	b := map[string]any{"context": map[string]any{"idempotencyKey": key}}
	for k, v := range body {
		b[k] = v
	}
	var acc struct {
		TaskID string `json:"taskId"`
	}
	if !retryJSON(t, http.MethodPost, url+"/api/workflows/apply", apiKey, b, &acc, http.StatusAccepted, http.StatusOK) {
		return ""
	}
	return acc.TaskID
}

// pullWithRetry is one GET …/tasks/pull answered with 200; it returns the task ids handed out.
func pullWithRetry(t *testing.T, url, key, project string, limit int) []string {
	var ans pullAnswer
	if !retryJSON(t, http.MethodGet, fmt.Sprintf("%s/api/v1/projects/%s/tasks/pull?limit=%d", url, project, limit), key, nil, &ans, http.StatusOK) {
		return nil
	}
	return ans.ids()
}

// groupAssignment is the consumer group's members and, per member, the partitions of topic it
// owns, as the group coordinator reports them (empty while the group rebalances).
func groupAssignment(t *testing.T, brokers []string, group, topic string) map[string][]int32 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Groups) != 1 || resp.Groups[0].State != "Stable" {
		return nil
	}
	out := map[string][]int32{}
	for _, m := range resp.Groups[0].Members {
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(m.MemberAssignment); err != nil {
			t.Fatalf("member %s assignment: %v", m.MemberID, err)
		}
		out[m.MemberID] = nil
		for _, tp := range a.Topics {
			if tp.Topic == topic {
				out[m.MemberID] = append(out[m.MemberID], tp.Partitions...)
			}
		}
	}
	return out
}

// splitBetween reports whether the assignment has exactly members members, each owning at least
// one partition of the topic's partitions, and every partition owned by exactly one of them.
func splitBetween(a map[string][]int32, members, partitions int) bool {
	if len(a) != members {
		return false
	}
	owned := map[int32]int{}
	for _, ps := range a {
		if len(ps) == 0 {
			return false
		}
		for _, p := range ps {
			owned[p]++
		}
	}
	for p := range int32(partitions) {
		if owned[p] != 1 {
			return false
		}
	}
	return len(owned) == partitions
}

// taskQueuePollers lists the identities that polled the env's task queue (workflow and activity
// tasks) recently, as the Temporal server reports them.
func taskQueuePollers(t *testing.T, env *e2e.Env) []string {
	t.Helper()
	var ids []string
	for _, kind := range []enums.TaskQueueType{enums.TASK_QUEUE_TYPE_WORKFLOW, enums.TASK_QUEUE_TYPE_ACTIVITY} {
		resp, err := env.Platform.Temporal.DescribeTaskQueue(env.Context(), env.Config.Temporal.TaskQueue, kind)
		if err != nil {
			t.Fatalf("describe task queue: %v", err)
		}
		for _, p := range resp.GetPollers() {
			if !slices.Contains(ids, p.GetIdentity()) {
				ids = append(ids, p.GetIdentity())
			}
		}
	}
	return ids
}

// scheduledRun is one workflow a schedule started, from Temporal's visibility store.
type scheduledRun struct {
	id            string
	status        enums.WorkflowExecutionStatus
	start, closed time.Time
}

// scheduledRuns lists the workflows schedule id started on the env's task queue.
func scheduledRuns(t *testing.T, env *e2e.Env, id string) []scheduledRun {
	t.Helper()
	q := fmt.Sprintf("TemporalScheduledById = '%s' AND TaskQueue = '%s'", id, env.Config.Temporal.TaskQueue)
	var runs []scheduledRun
	var token []byte
	for {
		resp, err := env.Platform.Temporal.ListWorkflow(env.Context(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: q, NextPageToken: token})
		if err != nil {
			t.Fatalf("list runs of schedule %s: %v", id, err)
		}
		for _, e := range resp.GetExecutions() {
			runs = append(runs, scheduledRun{id: e.GetExecution().GetWorkflowId(), status: e.GetStatus(),
				start: e.GetStartTime().AsTime(), closed: e.GetCloseTime().AsTime()})
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return runs
		}
	}
}

// checkScheduleRanOnce pauses schedule id and checks what it did while two workers served its task
// queue: every action started a distinct workflow, the workflows it reports starting are exactly
// those Temporal holds, all of them completed, and none overlapped another. It returns the
// schedule's action count, the ticks it skipped because the previous run was still going, and
// the longest run (one whose activity died with a worker waits out the activity's timeout).
func checkScheduleRanOnce(t *testing.T, env *e2e.Env, id string) (actions, skipped int64, longest time.Duration) {
	t.Helper()
	ctx := env.Context()
	h := env.Platform.Temporal.ScheduleClient().GetHandle(ctx, id)
	if err := h.Pause(ctx, client.SchedulePauseOptions{Note: "scale-out test checks its runs"}); err != nil {
		t.Fatalf("pause schedule %s: %v", id, err)
	}
	var runs []scheduledRun
	e2e.Eventually(t, 2*time.Minute, "schedule "+id+"'s runs to close and be listed", func() bool {
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatalf("describe schedule %s: %v", id, err)
		}
		actions, skipped = int64(d.Info.NumActions), int64(d.Info.NumActionsSkippedOverlap)
		seen := map[string]bool{}
		for _, a := range d.Info.RecentActions {
			if a.StartWorkflowResult == nil {
				continue
			}
			wid := a.StartWorkflowResult.WorkflowID
			if seen[wid] {
				t.Fatalf("schedule %s: two recent actions started workflow %s", id, wid)
			}
			seen[wid] = true
		}
		runs = scheduledRuns(t, env, id)
		return len(d.Info.RunningWorkflows) == 0 && int64(len(runs)) == actions && allClosed(runs)
	})
	slices.SortFunc(runs, func(a, b scheduledRun) int { return a.start.Compare(b.start) })
	for i, r := range runs {
		if r.status != enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			t.Errorf("schedule %s: run %s ended %s", id, r.id, r.status)
		}
		longest = max(longest, r.closed.Sub(r.start))
		if i > 0 && r.start.Before(runs[i-1].closed) {
			t.Errorf("schedule %s: run %s started at %s, before run %s closed at %s", id, r.id, r.start, runs[i-1].id, runs[i-1].closed)
		}
	}
	return actions, skipped, longest
}

func allClosed(runs []scheduledRun) bool {
	for _, r := range runs {
		if r.status == enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return false
		}
	}
	return true
}
