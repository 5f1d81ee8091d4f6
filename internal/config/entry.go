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
	// RetryMax is retry.max when a request does not send retryMax: how many times a failed run is
	// retried before the task is suspended for an operator.
	RetryMax int `env:"ENTRY_RETRY_MAX" envDefault:"3"`
	// RetryMaxLimit bounds a request's retryMax, so one caller cannot keep a task cycling forever.
	RetryMaxLimit int `env:"ENTRY_RETRY_MAX_LIMIT" envDefault:"10"`
	// HTTPRetryDelays is the fixed delay sequence of the http and cli channels; the last delay
	// repeats when retry.max is longer than the list.
	HTTPRetryDelays []time.Duration `env:"ENTRY_HTTP_RETRY_DELAYS" envSeparator:"," envDefault:"5s,30s,2m"`
	// TelegramRetryBase is the first delay of the telegram channel; each next one doubles, capped
	// by TelegramRetryCap (each Telegram retry waits twice as long as the one before).
	TelegramRetryBase time.Duration `env:"ENTRY_TELEGRAM_RETRY_BASE" envDefault:"2s"`
	TelegramRetryCap  time.Duration `env:"ENTRY_TELEGRAM_RETRY_CAP" envDefault:"10m"`
	// TelegramEdits says what an edited_message update does: "ignore" acknowledges it and runs
	// nothing (the original message's task stands); "rerun" runs the edited text as a new task,
	// with its own pipeline run, quota unit and reply.
	TelegramEdits string `env:"ENTRY_TELEGRAM_EDITS" envDefault:"ignore"`

	// WaitTimeoutDefault is waitTimeoutSeconds when a waitForResult request does not send it;
	// WaitTimeoutMax bounds it so a blocked request cannot hold a connection for long.
	WaitTimeoutDefault time.Duration `env:"ENTRY_WAIT_TIMEOUT_DEFAULT" envDefault:"30s"`
	WaitTimeoutMax     time.Duration `env:"ENTRY_WAIT_TIMEOUT_MAX" envDefault:"120s"`
	// EnqueueTimeout bounds the Temporal start call; past it the intake answers 503.
	EnqueueTimeout time.Duration `env:"ENTRY_ENQUEUE_TIMEOUT" envDefault:"5s"`
	// IdempotencyWindow is the {ts} bucket of a generated idempotency key: repeated clicks within
	// one window share a key and therefore a task.
	IdempotencyWindow time.Duration `env:"ENTRY_IDEMPOTENCY_WINDOW" envDefault:"10s"`

	// UserID and FeatureID are the pipeline_tasks user_id/feature_id (quota account) of entry tasks
	// whose context.user carries no id. Give this user a quota for the feature.
	UserID    string `env:"ENTRY_USER_ID" envDefault:"entry"`
	FeatureID string `env:"ENTRY_FEATURE_ID" envDefault:"entry"`

	// SuspendedAlertThreshold: above this many suspended tasks the worker logs a warning and the
	// taskloom_entry_suspended_over_threshold gauge turns 1. SuspendedCheckInterval is how often.
	SuspendedAlertThreshold int           `env:"ENTRY_SUSPENDED_ALERT_THRESHOLD" envDefault:"20"`
	SuspendedCheckInterval  time.Duration `env:"ENTRY_SUSPENDED_CHECK_INTERVAL" envDefault:"1m"`
	// SuspendedDropAfter: a suspended task that no operator resumes within this long is dropped
	// by its own workflow's timer (reason recorded, counted as autoDropped in the stats). 0 keeps
	// suspended tasks waiting for an operator for ever. A task takes the value in force when it
	// is accepted (it is part of the workflow's input, so a change never alters a running task).
	SuspendedDropAfter time.Duration `env:"ENTRY_SUSPENDED_DROP_AFTER" envDefault:"24h"`

	// TelegramBotToken authenticates sendMessage; empty disables replies (tasks still run).
	TelegramBotToken string `env:"TELEGRAM_BOT_TOKEN"`
	// TelegramAPIBaseURL is the Bot API origin (the dev stack's fake in dev).
	TelegramAPIBaseURL string `env:"TELEGRAM_API_BASE_URL" envDefault:"https://api.telegram.org"`
	// TelegramWebhookSecret must equal X-Telegram-Bot-Api-Secret-Token (setWebhook's
	// secret_token). Empty refuses every webhook call.
	TelegramWebhookSecret string `env:"TELEGRAM_WEBHOOK_SECRET"`
	// TelegramWorkflowID is the pipeline a chat's messages run; TelegramChatWorkflows overrides it
	// per chat as chat_id:pipeline pairs.
	TelegramWorkflowID    string            `env:"TELEGRAM_WORKFLOW_ID"`
	TelegramChatWorkflows map[string]string `env:"TELEGRAM_CHAT_WORKFLOWS" envSeparator:"," envKeyValSeparator:":"`
	// TelegramReplyField is the field of the pipeline's final output sent back as the reply text;
	// when it is absent the whole output is sent as JSON.
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
