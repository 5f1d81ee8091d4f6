package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/entry"
	tgfake "github.com/taskloom/taskloom/internal/fakes/telegram"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/platform"
)

// applyCmd: `starter apply --workflow-id … --text … --chat-id … [--wait 30s]`, the CLI intake. It
// goes through the same submitter as the HTTP API and the Telegram webhook (channel cli).
func applyCmd() *cobra.Command {
	var (
		workflowID, version, text, chatID, key string
		history                                []string
		retryMax                               int
		wait                                   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Enqueue an entry task (TaskEnvelope, channel cli) and optionally wait for its result",
		Example: `  starter apply --workflow-id entry_echo --text "hello" --chat-id ops-42 --wait 30s
  starter apply --workflow-id entry_echo --text "again" --chat-id ops-42 --key my-key-1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, _, err := loadPlatform(cmd.Context())
			if err != nil {
				return err
			}
			defer p.Close()
			req := &entry.ApplyRequest{WorkflowID: workflowID, WorkflowVersion: version, UserText: &text, HistoryChunks: &history,
				CoreEnvelope: map[string]any{"metadata": map[string]any{"chat_id": chatID}}, IdempotencyKey: key}
			if cmd.Flags().Changed("retry-max") {
				req.RetryMax = &retryMax
			}
			return runApply(cmd.Context(), p, req, wait)
		},
	}
	f := cmd.Flags()
	f.StringVar(&workflowID, "workflow-id", "", "pipeline to run (required)")
	f.StringVar(&version, "workflow-version", "", "pipeline version (default: latest)")
	f.StringVar(&text, "text", "", "user text (required)")
	f.StringVar(&chatID, "chat-id", "", "chat id (coreEnvelope.metadata.chat_id, required)")
	f.StringArrayVar(&history, "history", []string{}, "a history chunk (repeatable)")
	f.StringVar(&key, "key", "", "idempotency key (default: cli:{workflowId}:{chatId}:{ts})")
	f.IntVar(&retryMax, "retry-max", 0, "retries before the task is suspended (default ENTRY_RETRY_MAX)")
	f.DurationVar(&wait, "wait", 0, "wait this long for the result (0: do not wait)")
	return cmd
}

func runApply(ctx context.Context, p *platform.Platform, req *entry.ApplyRequest, wait time.Duration) error {
	if err := req.Validate(); err != nil {
		return cliFieldError(err)
	}
	sub := entry.NewSubmitter(p)
	if err := sub.Runs.EnsureIndexes(ctx); err != nil {
		return err
	}
	env := req.Envelope(entry.Defaults{Channel: entry.ChannelCLI, Source: "cli", RetryMax: p.Config.Entry.RetryMax,
		Now: time.Now(), Window: p.Config.Entry.IdempotencyWindow})
	acc, err := sub.Submit(ctx, env)
	if err != nil {
		return cliFieldError(err)
	}
	out := any(acc)
	if wait > 0 {
		tasks := entry.NewTasks(p)
		wctx, cancel := context.WithTimeout(ctx, wait)
		done, werr := tasks.Wait(wctx, acc.TaskID)
		cancel()
		st, err := tasks.Status(ctx, acc.TaskID)
		if err != nil {
			return err
		}
		out = st
		if !done && werr == nil {
			fmt.Fprintf(os.Stderr, "task %s still %s after %s; check with GET /api/workflows/tasks/%s\n", acc.TaskID, st.Status, wait, acc.TaskID)
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// cliFieldError names the flag behind a request field.
func cliFieldError(err error) error {
	var fe *entry.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	flag := map[string]string{"workflowId": "--workflow-id", "userText": "--text", "coreEnvelope.metadata.chat_id": "--chat-id",
		"idempotencyKey": "--key", "retryMax": "--retry-max", "workflowVersion": "--workflow-version"}[fe.Field]
	if flag == "" {
		return err
	}
	return fmt.Errorf("%s: %s", flag, fe.Message)
}

// Dev stack: the fake Bot API (also the assistant the demo pipeline calls) and its bot settings.
const (
	devBotToken        = "dev:taskloom-fake-bot"
	devTelegramSecret  = "taskloom-dev-telegram-secret"
	devEntryPipeline   = "entry_echo"
	devEntryProviderID = "entry_assistant"
)

// devTelegram starts the fake Telegram Bot API unless TELEGRAM_BOT_TOKEN points at a real bot.
func devTelegram(_ context.Context, cfg *config.Config, _ *slog.Logger) (string, string, error) {
	c := &cfg.Entry
	if c.TelegramBotToken != "" {
		return "telegram", c.TelegramAPIBaseURL, nil
	}
	s, err := tgfake.Start("127.0.0.1:0", devBotToken)
	if err != nil {
		return "", "", err
	}
	c.TelegramBotToken, c.TelegramAPIBaseURL = devBotToken, s.URL
	if c.TelegramWebhookSecret == "" {
		c.TelegramWebhookSecret = devTelegramSecret
	}
	if c.TelegramWorkflowID == "" {
		c.TelegramWorkflowID = devEntryPipeline
	}
	return "telegram (fake)", s.URL + "/_admin/messages", nil
}

// devEntrySeed publishes the demo pipeline entry_echo over the fake assistant, grants the entry
// quota account units, and returns the curls that exercise the intake.
func devEntrySeed(ctx context.Context, p *platform.Platform, adminKey string) ([]string, error) {
	c := p.Config.Entry
	if c.TelegramBotToken != devBotToken {
		return nil, nil // a real bot: the operator publishes the pipelines it uses
	}
	store := pipeline.NewStore(p.Mongo)
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: devEntryProviderID, BaseURL: c.TelegramAPIBaseURL + tgfake.AssistantPath}); err != nil {
		return nil, err
	}
	def := &pipeline.Definition{Name: devEntryPipeline, Version: pipeline.DefaultVersion, Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "assistant_reply", Type: pipeline.StepSyncAPI, ProviderRef: devEntryProviderID, Endpoint: "/reply",
		InputMapping:  map[string]any{"text": "${input_data.user_text}", "history": "${input_data.history_chunks}"},
		OutputMapping: map[string]string{"text": "$.reply", "history_len": "history_len"}, TimeoutSeconds: 30,
	}}}}
	if _, _, err := store.PublishSchema(ctx, def); err != nil && !errors.Is(err, pipeline.ErrSchemaConflict) {
		return nil, fmt.Errorf("publish %s: %w", devEntryPipeline, err)
	}
	if q, err := store.GetQuota(ctx, c.UserID, c.FeatureID); err != nil || q.Remaining < 100 {
		if _, err := store.SetQuota(ctx, c.UserID, c.FeatureID, 1000); err != nil {
			return nil, err
		}
	}
	api := "http://" + p.Config.API.Addr
	return []string{
		fmt.Sprintf("entry: pipeline %s (quota %s/%s); Telegram fake messages at %s/_admin/messages", devEntryPipeline, c.UserID, c.FeatureID, c.TelegramAPIBaseURL),
		fmt.Sprintf(`  curl -s -X POST %s/api/workflows/apply -H 'X-API-Key: %s' -H 'Content-Type: application/json' `+
			`-d '{"workflowId":"%s","userText":"hello","historyChunks":[],"coreEnvelope":{"metadata":{"chat_id":"demo-1"}},"waitForResult":true}'`,
			api, adminKey, devEntryPipeline),
		fmt.Sprintf(`  curl -s -X POST %s/telegram/webhook -H 'X-Telegram-Bot-Api-Secret-Token: %s' -H 'Content-Type: application/json' `+
			`-d '{"update_id":1,"message":{"message_id":1,"date":0,"chat":{"id":42,"type":"private"},"text":"hi bot"}}'`,
			api, c.TelegramWebhookSecret),
		fmt.Sprintf("  curl -s %s/internal/tasks/stats -H 'X-API-Key: %s'", api, adminKey),
	}, nil
}
