package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/devstack/fakes/receiver"
	"github.com/taskloom/taskloom/internal/devstack/fakes/telegram"
	"github.com/taskloom/taskloom/internal/devstack/fakes/vendors"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedemo"
)

// The demo Feishu tables.
const (
	// devBase is the demo Bitable base in testdata/feishu/taskloom_base.json.
	devTaskTable    = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblTasks"
	devWebhookTable = "https://dev.feishu.cn/wiki/wikcnTaskloomDemo?table=tblWebhook"
	devDramaTable   = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblDrama"
	devCaptureTable = "https://dev.feishu.cn/base/bascnTaskloomDemo?table=tblCapture"
)

// devFeishu starts the Bitable emulator with the demo base when no Feishu app is configured.
func devFeishu(ctx context.Context, cfg *config.Config, addrs devAddrs, _ *slog.Logger) (string, string, error) {
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
	if err := emu.Start(addrs[feishuEmulatorAddr]); err != nil {
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
func devSummaryReceiver(ctx context.Context, cfg *config.Config, addrs devAddrs, _ *slog.Logger) (string, string, error) {
	if cfg.Webhook.SummaryWebhookURL != "" {
		return "summary webhook", cfg.Webhook.SummaryWebhookURL + " (configured)", nil
	}
	r, err := receiver.Start(addrs[summaryReceiverAddr])
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

// devCrawlerCommand is the crawler under `make dev`: this binary's fake
// crawler (`dev crawl fake-crawler`), so a POSTed crawl task runs to
// Completed on its own.
const devCrawlerCommand = "{self} crawl fake-crawler --original-task-id {id} --tweets 450 --brokers {brokers}"

// devCrawler makes the fake crawler the crawler command of the dev stack
// unless CRAWL_CRAWLER_COMMAND is set. {self} is this binary (the dev
// binary, which has the fake-crawler command), since it hosts the worker
// under `make dev`.
func devCrawler(_ context.Context, cfg *config.Config, _ devAddrs, _ *slog.Logger) (string, string, error) {
	if cfg.Crawl.CrawlerCommand == "" {
		cfg.Crawl.CrawlerCommand = devCrawlerCommand
	}
	self, err := os.Executable()
	if err != nil {
		return "", "", fmt.Errorf("crawl: locate own executable: %w", err)
	}
	return "crawler", self + " (" + cfg.Crawl.CrawlerCommand + ")", nil
}

// crawlFakeCrawlerCmd is `dev crawl fake-crawler`: one original task's TASK_INIT and tweets
// produced to Kafka, as the real crawler would. It is the dev stack's crawler command and a load
// generator.
func crawlFakeCrawlerCmd() *cobra.Command {
	var o crawler.Options
	cmd := &cobra.Command{
		Use:   "fake-crawler",
		Short: "Produce a crawler's TASK_INIT and tweets to Kafka, as crawl4ai would",
		Long: `fake-crawler sends the crawler's TaskControlMessage and RawScrapedDataMessage records for one
original task. It is the crawler command of the dev stack and a load generator.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return crawler.Run(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	o.Flags(cmd.Flags())
	_ = cmd.MarkFlagRequired("original-task-id")
	return cmd
}

// Dev stack: the fake Bot API (also the assistant the demo pipeline calls) and its bot settings.
const (
	devBotToken       = "dev:taskloom-fake-bot"
	devTelegramSecret = "taskloom-dev-telegram-secret"
)

// devTelegram starts the fake Telegram Bot API unless TELEGRAM_BOT_TOKEN points at a real bot.
func devTelegram(_ context.Context, cfg *config.Config, addrs devAddrs, _ *slog.Logger) (string, string, error) {
	c := &cfg.Entry
	if c.TelegramBotToken != "" {
		return "telegram", c.TelegramAPIBaseURL, nil
	}
	s, err := telegram.Start(addrs[telegramAddr], devBotToken)
	if err != nil {
		return "", "", err
	}
	c.TelegramBotToken, c.TelegramAPIBaseURL = devBotToken, s.URL
	if c.TelegramWebhookSecret == "" {
		c.TelegramWebhookSecret = devTelegramSecret
	}
	if c.TelegramWorkflowID == "" {
		c.TelegramWorkflowID = pipelinedemo.EntryPipeline
	}
	return "telegram (fake)", s.URL + "/_admin/messages", nil
}

// pipelineFakesCmd is `dev pipeline fakes`: the fake vendors and SCF on their own, for a worker run
// outside the dev stack (PIPELINE_FAKE_VENDORS_URL).
func pipelineFakesCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "fakes",
		Short: "Run the fake vendors and the fake SCF video-compositor until interrupted",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := config.Load()
			if err != nil {
				return err
			}
			s, err := vendors.Start(addr, vendors.Options{Secret: cfg.Pipeline.Secret()})
			if err != nil {
				return err
			}
			defer s.Close()
			fmt.Fprintf(c.OutOrStdout(), "fake vendors on %s (set PIPELINE_FAKE_VENDORS_URL=%s)\n", s.URL, s.URL)
			<-c.Context().Done() // cli.Main cancels it on SIGINT/SIGTERM
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8091", "listen address")
	return cmd
}

// devWatermarkVar is the allow-listed variable the third seed example reads.
const devWatermarkVar = "WATERMARK_URL"

// devPipelineFakes starts the fake vendors and SCF for `make dev` unless PIPELINE_FAKE_VENDORS_URL
// points at running ones. The fake SCF signs callbacks with the API's callback secret. It serves
// until the dev process exits.
func devPipelineFakes(_ context.Context, cfg *config.Config, addrs devAddrs, _ *slog.Logger) (string, string, error) {
	if cfg.Pipeline.FakeVendorsURL != "" {
		return "pipeline vendors", cfg.Pipeline.FakeVendorsURL, nil
	}
	s, err := vendors.Start(addrs[vendorsAddr], vendors.Options{Secret: cfg.Pipeline.Secret()})
	if err != nil {
		return "", "", err
	}
	cfg.Pipeline.FakeVendorsURL = s.URL
	// The example collection_video_pipeline reads ${env.WATERMARK_URL}, from the process
	// environment; give the demo one.
	if cfg.Pipeline.WatermarkURL == "" {
		cfg.Pipeline.WatermarkURL = s.URL + "/assets/watermark.png"
		if err := os.Setenv(devWatermarkVar, cfg.Pipeline.WatermarkURL); err != nil {
			return "", "", err
		}
	}
	return "pipeline vendors + SCF", s.URL, nil
}
