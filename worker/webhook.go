package worker

import (
	"context"
	"fmt"
	"net/http"
	"time"

	sdkworker "go.temporal.io/sdk/worker"

	webhookact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	"github.com/taskloom/taskloom/internal/webhook/capturedb"
	"github.com/taskloom/taskloom/internal/webhook/summary"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// registerWebhook registers the webhook result table workflows and activities and, when a
// Feishu app is configured, the "feishu" readiness check.
func registerWebhook(w sdkworker.Registry, p *platform.Platform) error {
	cfg := p.Config.Webhook
	cl, err := bitable.NewFeishuClient(cfg)
	if err != nil {
		return err
	}
	records, err := openRecords(p)
	if err != nil {
		return err
	}
	acts := &webhookact.Activities{
		Pusher:     &summary.Pusher{Secret: cfg.SummaryWebhookSecret, Client: &http.Client{Timeout: cfg.SummaryWebhookTimeout}},
		Deliveries: webhookwf.DeliveryClient{Client: p.Temporal},
		Log:        p.Log,
	}
	if cl == nil {
		p.Log.Warn("webhook: FEISHU_APP_ID not set; webhook activities will fail until it is")
	} else {
		p.AddCheck("feishu", cl.Ping)
		acts.OpenTables = tableOpener(cl, webhook.FieldNamesFrom(cfg), records)
	}
	webhookwf.Register(w, acts)
	return nil
}

// tableOpener opens a target's tables on cl, with piracy records read from records when it is
// set.
func tableOpener(cl *feishu.Client, f webhook.FieldNames, records bitable.RecordSource) func(context.Context, webhook.URLs) (webhookact.Tables, error) {
	return func(ctx context.Context, u webhook.URLs) (webhookact.Tables, error) {
		t, err := bitable.Open(ctx, cl, u, f)
		if err != nil {
			return nil, err
		}
		t.Records = records
		return t, nil
	}
}

// openRecords opens WEBHOOK_RECORDS_SQLITE when it is set. The handle lives as long as the
// process: it is read-only, so nothing is lost when the process ends without closing it. It
// returns the interface, not *capturedb.Records: a nil pointer in a non-nil interface would
// make the payload builder call into a database that was never opened.
func openRecords(p *platform.Platform) (bitable.RecordSource, error) {
	cfg := p.Config.Webhook
	if cfg.RecordsSQLite == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := capturedb.Open(ctx, cfg.RecordsSQLite, cfg.RecordsSQLiteTable, cfg.RecordsSQLiteTaskID)
	if err != nil {
		return nil, fmt.Errorf("WEBHOOK_RECORDS_SQLITE: %w", err)
	}
	p.AddCheck("records-sqlite", r.Ping)
	return r, nil
}
