package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/actions"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	"github.com/taskloom/taskloom/internal/webhook"
)

// deliveredRowActions is the Temporal Cloud cost of a row a sweep delivers in one push: the
// claim (its workflow start, with every search attribute) and the sweep's outcome signal. The
// push, the re-read and the write-back are the sweep's batched Feishu calls, not actions.
const deliveredRowActions = 2

// A ready row delivered by a sweep costs deliveredRowActions: no hold timer (the claim's run
// timeout holds the row), no search-attribute upsert (pending → success changes no operator's
// answer), no activity of its own. Its recorded path, delivery_claimed_success, has a budget row
// of the same figure that is not Varies.
func TestReadyRowCostsTwoActions(t *testing.T) {
	e := newEnv(t)
	e.addTask("451", "视频录屏采集", "success", map[string]any{"ItemID": "it-451"})
	rec := e.addRow(webhook.BizVideoScreenCapture, "", []string{"451"}, nil)
	if res := e.sweep(webhook.RowFilter{}); res.Delivered != 1 {
		t.Fatalf("sweep %+v", res)
	}
	if out := e.outcome(rec); out.Status != webhook.StatusSuccess {
		t.Fatalf("outcome %+v", out)
	}
	if f := e.row(rec); f["Status"] != webhook.StatusSuccess || num(f["StartAt"]) == 0 {
		t.Fatalf("row %+v", f)
	}
	e.assertPushedOnce(1)
	c, err := actions.Fetch(e.ctx(), e.temporal(), webhook.DeliveryID("tblWebhook", rec), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Designed() != deliveredRowActions {
		t.Fatalf("a delivered row cost %d actions (%d events), want %d", c.Designed(), c.Events, deliveredRowActions)
	}
	if b, ok := histories.BudgetOf("webhook", "delivery_claimed_success"); !ok || b.Varies != "" || b.Actions > deliveredRowActions {
		t.Fatalf("budget row of delivery_claimed_success %+v, want a fixed figure of at most %d", b, deliveredRowActions)
	}
	e.recordDelivery(rec, "delivery_claimed_success")
}

// Feishu refuses the sweep's batch write-back after the push: the push is never repeated, and
// the claimed workflow writes its row back itself (one WebhookWriteBack, retried by Temporal).
func TestWriteBackDownAfterPushNeverPushesTwice(t *testing.T) {
	e := newEnv(t)
	e.addTask("461", "视频录屏采集", "success", map[string]any{"ItemID": "it-461"})
	rec := e.addRow(webhook.BizVideoScreenCapture, "", []string{"461"}, nil)
	e.emu.Inject(feishuemu.Fault{Endpoint: feishuemu.EPBatchUpdate, Code: 1254000, Times: 1})
	e.sweep(webhook.RowFilter{})
	if out := e.outcome(rec); out.Status != webhook.StatusSuccess {
		t.Fatalf("outcome %+v", out)
	}
	if f := e.row(rec); f["Status"] != webhook.StatusSuccess || num(f["StartAt"]) == 0 {
		t.Fatalf("row %+v", f)
	}
	// A second sweep finds nothing to push.
	if res := e.sweep(webhook.RowFilter{}); res.Candidates != 0 {
		t.Fatalf("second sweep %+v", res)
	}
	e.assertPushedOnce(1)
	e.recordDelivery(rec, "delivery_claimed_workflow_writes_back")
}

// recordFirstRun records the first run of a row's delivery workflow (the claimed run, when the
// row went on alone after it).
func (e *env) recordFirstRun(recordID, name string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := webhook.DeliveryID("tblWebhook", recordID)
	d, err := e.temporal().DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		e.t.Fatal(err)
	}
	e.record(id, d.GetWorkflowExecutionInfo().GetFirstRunId(), name)
}
