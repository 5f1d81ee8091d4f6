package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/intake"
	"github.com/taskloom/taskloom/internal/platform"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
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
			return withSchema(cmd, func(ctx context.Context, p *platform.Platform) error {
				req := &entry.ApplyRequest{WorkflowID: workflowID, WorkflowVersion: version, UserText: &text, HistoryChunks: &history,
					CoreEnvelope: map[string]any{"metadata": map[string]any{"chat_id": chatID}}, IdempotencyKey: key}
				if cmd.Flags().Changed("retry-max") {
					req.RetryMax = &retryMax
				}
				return runApply(cmd, p, req, wait)
			})
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

func runApply(c *cobra.Command, p *platform.Platform, req *entry.ApplyRequest, wait time.Duration) error {
	ctx := c.Context()
	if err := req.Validate(); err != nil {
		return cliFieldError(err)
	}
	wf := entrywf.NewClient(p.Temporal, p.Config.Temporal.TaskQueue)
	sub := intake.NewSubmitter(p, wf)
	env := req.Envelope(entry.Defaults{Channel: entry.ChannelCLI, Source: "cli", RetryMax: p.Config.Entry.RetryMax,
		Now: time.Now(), Window: p.Config.Entry.IdempotencyWindow, Owner: entry.OwnerCLI})
	acc, err := sub.Submit(ctx, env)
	if err != nil {
		return cliFieldError(err)
	}
	out := any(acc)
	if wait > 0 {
		tasks := intake.NewTasks(p, wf)
		wctx, cancel := context.WithTimeout(ctx, wait)
		done, werr := tasks.Wait(wctx, acc.TaskID)
		cancel()
		st, err := tasks.Status(ctx, acc.TaskID)
		if err != nil {
			return err
		}
		out = st
		if !done && werr == nil {
			fmt.Fprintf(c.ErrOrStderr(), "task %s still %s after %s; check with GET /api/workflows/tasks/%s\n", acc.TaskID, st.Status, wait, acc.TaskID)
		}
	}
	return render(c, out)
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
