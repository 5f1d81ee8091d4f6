package worker

import (
	"net/http"

	sdkworker "go.temporal.io/sdk/worker"

	wact "github.com/taskloom/taskloom/activities/webhook"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/webhook"
	wfwebhook "github.com/taskloom/taskloom/workflows/webhook"
)

// registerWebhook registers the webhook result table workflows and activities and, when a
// Feishu app is configured, the "feishu" readiness check.
func registerWebhook(w sdkworker.Registry, p *platform.Platform) error {
	cfg := p.Config.Webhook
	cl, err := webhook.NewFeishuClient(cfg)
	if err != nil {
		return err
	}
	if cl == nil {
		p.Log.Warn("webhook: FEISHU_APP_ID not set; webhook activities will fail until it is")
	} else {
		p.AddCheck("feishu", cl.Ping)
	}
	wfwebhook.Register(w)
	(&wact.Activities{
		Feishu: cl, Fields: webhook.FieldNamesFrom(cfg), Temporal: p.Temporal,
		HTTP: &http.Client{Timeout: cfg.SummaryWebhookTimeout}, BotSecret: cfg.SummaryWebhookSecret, Log: p.Log,
	}).Register(w)
	return nil
}
