package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Entry is the entry subsystem's configuration: one durable intake for HTTP,
// Telegram and the CLI. Every envelope becomes an EntryTaskWorkflow that runs a pipeline.
type Entry struct {
	// `retry.max` when a request sends no `retryMax`: retries of a failed run before the task is
	// **suspended**.
	RetryMax int `env:"ENTRY_RETRY_MAX" envDefault:"3"`
	// Largest `retryMax` a request may ask for (400 `retryMax` above it).
	RetryMaxLimit int `env:"ENTRY_RETRY_MAX_LIMIT" envDefault:"10"`
	// Fixed retry delays of the `http` and `cli` channels; the last one repeats.
	HTTPRetryDelays []time.Duration `env:"ENTRY_HTTP_RETRY_DELAYS" envSeparator:"," envDefault:"5s,30s,2m"`
	// First retry delay of the `telegram` channel; each next one doubles, up to `ENTRY_TELEGRAM_RETRY_CAP`.
	TelegramRetryBase time.Duration `env:"ENTRY_TELEGRAM_RETRY_BASE" envDefault:"2s"`
	// Upper bound of the `telegram` channel's doubling retry delay.
	TelegramRetryCap time.Duration `env:"ENTRY_TELEGRAM_RETRY_CAP" envDefault:"10m"`
	// What an `edited_message` update does. `ignore`: answered 200, nothing runs (the original
	// message's task and reply stand). `rerun`: the edited text runs as a new task (its own pipeline
	// run, quota unit and reply), keyed by the edit's `update_id`.
	TelegramEdits string `env:"ENTRY_TELEGRAM_EDITS" envDefault:"ignore"`

	// `waitTimeoutSeconds` of a `waitForResult` request that sends none.
	WaitTimeoutDefault time.Duration `env:"ENTRY_WAIT_TIMEOUT_DEFAULT" envDefault:"30s" readby:"api"`
	// Upper bound of `waitTimeoutSeconds`; past it the answer is 202 + `taskId`.
	WaitTimeoutMax time.Duration `env:"ENTRY_WAIT_TIMEOUT_MAX" envDefault:"120s" readby:"api"`
	// Bound of the Temporal start call; past it the intake answers 503 + `Retry-After` and logs
	// `queue.enqueue_failed`.
	EnqueueTimeout time.Duration `env:"ENTRY_ENQUEUE_TIMEOUT" envDefault:"5s"`
	// `{ts}` bucket of a generated key `{channel}:{workflowId}:{chatId}:{ts}`: repeated clicks within
	// one window are one task. Callers needing exact dedupe send `idempotencyKey`.
	IdempotencyWindow time.Duration `env:"ENTRY_IDEMPOTENCY_WINDOW" envDefault:"10s"`

	// `pipeline_tasks.user_id` (quota account) of entry tasks whose `context.user.id` is empty.
	// **Grant it a quota** (`PUT /api/v1/quotas/entry/entry`), or every run fails with
	// `EntryQuotaExhausted` and ends suspended.
	UserID string `env:"ENTRY_USER_ID" envDefault:"entry"`
	// `pipeline_tasks.feature_id` of every entry task.
	FeatureID string `env:"ENTRY_FEATURE_ID" envDefault:"entry"`

	// Above this many suspended tasks the worker logs a warning (`entry.suspended_threshold_exceeded`)
	// and `taskloom_entry_suspended_over_threshold` is 1.
	SuspendedAlertThreshold int `env:"ENTRY_SUSPENDED_ALERT_THRESHOLD" envDefault:"20"`
	// How often the worker counts suspended tasks (`taskloom_entry_suspended_tasks`).
	SuspendedCheckInterval time.Duration `env:"ENTRY_SUSPENDED_CHECK_INTERVAL" envDefault:"1m"`
	// Auto-drop: a suspended task no operator resumes within this long is dropped by its own
	// workflow's timer (`dropReason`, `autoDropped` on the task, `autoDropped` in the stats). `0`
	// disables it. A task keeps the value in force when it was accepted.
	SuspendedDropAfter time.Duration `env:"ENTRY_SUSPENDED_DROP_AFTER" envDefault:"24h"`

	// Bot token for `sendMessage`. Empty in prod: tasks run, no reply is sent. Default: (empty: `make
	// dev` starts the fake Bot API).
	TelegramBotToken string `env:"TELEGRAM_BOT_TOKEN"`
	// Bot API origin (the fake's URL in dev).
	TelegramAPIBaseURL string `env:"TELEGRAM_API_BASE_URL" envDefault:"https://api.telegram.org"`
	// Must equal the `X-Telegram-Bot-Api-Secret-Token` header (setWebhook `secret_token`). Empty
	// refuses every webhook call (401). Default: dev: `taskloom-dev-telegram-secret`.
	TelegramWebhookSecret string `env:"TELEGRAM_WEBHOOK_SECRET" readby:"api"`
	// Pipeline a chat's messages run. Default: dev: `entry_echo`.
	TelegramWorkflowID string `env:"TELEGRAM_WORKFLOW_ID"`
	// Per-chat overrides, `chat_id:pipeline,chat_id:pipeline` (e.g. `-1001234:support_bot`).
	TelegramChatWorkflows map[string]string `env:"TELEGRAM_CHAT_WORKFLOWS" envSeparator:"," envKeyValSeparator:":"`
	// Field of the pipeline's final output sent back as the reply; when absent the whole output is
	// sent as JSON.
	TelegramReplyField string `env:"TELEGRAM_REPLY_FIELD" envDefault:"text"`
}

// The values of ENTRY_TELEGRAM_EDITS.
const (
	TelegramEditsIgnore = "ignore"
	TelegramEditsRerun  = "rerun"
)

// RerunTelegramEdits reports whether an edited_message runs as a new task.
func (c *Entry) RerunTelegramEdits() bool { return c.TelegramEdits == TelegramEditsRerun }

func (c *Entry) validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if c.RetryMax < 0 || c.RetryMaxLimit < c.RetryMax {
		add(fmt.Errorf("ENTRY_RETRY_MAX: %d must be between 0 and ENTRY_RETRY_MAX_LIMIT (%d)", c.RetryMax, c.RetryMaxLimit))
	}
	if len(c.HTTPRetryDelays) == 0 {
		add(errors.New("ENTRY_HTTP_RETRY_DELAYS: needs at least one delay"))
	}
	for _, d := range c.HTTPRetryDelays {
		if d <= 0 {
			add(fmt.Errorf("ENTRY_HTTP_RETRY_DELAYS: %s must be positive", d))
		}
	}
	for _, v := range []struct {
		name string
		d    time.Duration
	}{
		{"ENTRY_TELEGRAM_RETRY_BASE", c.TelegramRetryBase}, {"ENTRY_TELEGRAM_RETRY_CAP", c.TelegramRetryCap},
		{"ENTRY_WAIT_TIMEOUT_DEFAULT", c.WaitTimeoutDefault}, {"ENTRY_WAIT_TIMEOUT_MAX", c.WaitTimeoutMax},
		{"ENTRY_ENQUEUE_TIMEOUT", c.EnqueueTimeout}, {"ENTRY_IDEMPOTENCY_WINDOW", c.IdempotencyWindow},
		{"ENTRY_SUSPENDED_CHECK_INTERVAL", c.SuspendedCheckInterval},
	} {
		if v.d <= 0 {
			add(fmt.Errorf("%s: %s must be positive", v.name, v.d))
		}
	}
	if c.TelegramRetryCap < c.TelegramRetryBase {
		add(errors.New("ENTRY_TELEGRAM_RETRY_CAP must be at least ENTRY_TELEGRAM_RETRY_BASE"))
	}
	if c.WaitTimeoutMax < c.WaitTimeoutDefault {
		add(errors.New("ENTRY_WAIT_TIMEOUT_MAX must be at least ENTRY_WAIT_TIMEOUT_DEFAULT"))
	}
	if c.SuspendedDropAfter < 0 {
		add(fmt.Errorf("ENTRY_SUSPENDED_DROP_AFTER: %s must not be negative (0 disables the auto-drop)", c.SuspendedDropAfter))
	}
	if c.SuspendedAlertThreshold < 0 {
		add(fmt.Errorf("ENTRY_SUSPENDED_ALERT_THRESHOLD: %d must not be negative", c.SuspendedAlertThreshold))
	}
	if strings.TrimSpace(c.UserID) == "" || strings.TrimSpace(c.FeatureID) == "" {
		add(errors.New("ENTRY_USER_ID and ENTRY_FEATURE_ID must not be empty"))
	}
	if err := oneOf(c.TelegramEdits, TelegramEditsIgnore, TelegramEditsRerun); err != nil {
		add(fmt.Errorf("ENTRY_TELEGRAM_EDITS: %w", err))
	}
	add(HTTPURL("TELEGRAM_API_BASE_URL", c.TelegramAPIBaseURL))
	for chat, wf := range c.TelegramChatWorkflows {
		if strings.TrimSpace(chat) == "" || strings.TrimSpace(wf) == "" {
			add(fmt.Errorf("TELEGRAM_CHAT_WORKFLOWS: %q:%q needs both a chat id and a pipeline name", chat, wf))
		}
	}
	return errors.Join(errs...)
}

// TelegramWorkflowFor is the pipeline a Telegram chat's messages run ("" when none is configured).
func (c *Entry) TelegramWorkflowFor(chatID string) string {
	if wf, ok := c.TelegramChatWorkflows[chatID]; ok {
		return wf
	}
	return c.TelegramWorkflowID
}
