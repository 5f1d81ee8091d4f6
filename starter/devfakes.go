package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/fakes/receiver"
	"github.com/taskloom/taskloom/internal/feishuemu"
)

// Fixed ports of the dev fakes.
const (
	feishuEmulatorAddr  = "127.0.0.1:18090"
	summaryReceiverAddr = "127.0.0.1:18091"
	// devBase is the demo Bitable base in testdata/feishu/taskloom_base.json.
	devTaskTable    = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblTasks"
	devWebhookTable = "https://dev.feishu.cn/wiki/wikcnTaskloomDemo?table=tblWebhook"
	devDramaTable   = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblDrama"
	devCaptureTable = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblCapture"
)

// devFeishu starts the Bitable emulator with the demo base when no Feishu app is configured.
func devFeishu(ctx context.Context, cfg *config.Config, _ *slog.Logger) (string, string, error) {
	w := &cfg.Webhook
	if w.FeishuAppID != "" {
		return "feishu", w.FeishuBaseURL + " (configured)", nil
	}
	fx, err := feishuemu.LoadFixtureFile(filepath.Join("testdata", "feishu", "taskloom_base.json"))
	if err != nil {
		return "", "", err
	}
	emu, err := feishuemu.New(feishuemu.Options{}, fx)
	if err != nil {
		return "", "", err
	}
	if err := emu.Start(feishuEmulatorAddr); err != nil {
		return "", "", err
	}
	go func() { <-ctx.Done(); _ = emu.Close() }()
	w.FeishuAppID, w.FeishuAppSecret, w.FeishuBaseURL = "cli_dev", "dev", emu.URL()
	setIfEmpty(&w.TaskBitableURL, devTaskTable)
	setIfEmpty(&w.WebhookBitableURL, devWebhookTable)
	setIfEmpty(&w.DramaBitableURL, devDramaTable)
	setIfEmpty(&w.CaptureBitableURL, devCaptureTable)
	return "feishu (emulator)", emu.URL() + "  (calls: /_emulator/calls)", nil
}

// devSummaryReceiver records the webhook payloads when SUMMARY_WEBHOOK_URL is unset.
func devSummaryReceiver(ctx context.Context, cfg *config.Config, _ *slog.Logger) (string, string, error) {
	if cfg.Webhook.SummaryWebhookURL != "" {
		return "summary webhook", cfg.Webhook.SummaryWebhookURL + " (configured)", nil
	}
	r, err := receiver.Start(summaryReceiverAddr)
	if err != nil {
		return "", "", err
	}
	go func() { <-ctx.Done(); _ = r.Close() }()
	cfg.Webhook.SummaryWebhookURL = r.URL() + "/summary"
	return "summary webhook", r.URL() + "/summary  (received: " + r.URL() + "/_received)", nil
}

func setIfEmpty(p *string, v string) {
	if *p == "" {
		*p = v
	}
}
