package config

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Webhook is the webhook subsystem's configuration: the Feishu app, the four
// Bitable tables by URL, the summary receiver and the loop timings.
type Webhook struct {
	// Feishu self-built app credentials (set together). In dev the stack's Bitable emulator stands in.
	FeishuAppID string `env:"FEISHU_APP_ID"`
	// Feishu self-built app credentials (set together). In dev the stack's Bitable emulator stands in.
	FeishuAppSecret string `env:"FEISHU_APP_SECRET"`
	// Open API origin, no trailing slash (the emulator's `http://127.0.0.1:PORT` in dev).
	FeishuBaseURL string `env:"FEISHU_BASE_URL" envDefault:"https://open.feishu.cn"`
	// Longest one Open API request may take; past it the request fails and is retried like any
	// transient error.
	FeishuTimeout time.Duration `env:"FEISHU_REQUEST_TIMEOUT" envDefault:"30s"`
	// Document time zone: `Date`/`Datetime` days and `ExactDate` filters are cut in it.
	TimeZone string `env:"FEISHU_TIME_ZONE" envDefault:"Asia/Shanghai"`

	// Task status table, `https://…/base/<app_token>?table=tbl…` or
	// `https://…/wiki/<node>?table=tbl…`. Unset (or `WEBHOOK_BITABLE_URL` unset), the webhook
	// endpoints answer 503. Default: – (dev: the Bitable emulator's tables).
	TaskBitableURL string `env:"TASK_BITABLE_URL"`
	// Webhook result table (same URL forms).
	WebhookBitableURL string `env:"WEBHOOK_BITABLE_URL"`
	// Drama list table (DramaInfo source, `task.BookID == drama.短剧 ID`). Optional.
	DramaBitableURL string `env:"DRAMA_BITABLE_URL"`
	// Capture result table (Records source when no SQLite database is set; the only source for
	// `video_screen_capture`). Optional; without either source Records is `[]`.
	CaptureBitableURL string `env:"CAPTURE_BITABLE_URL"`

	// Path of the capture side's local SQLite database, opened read-only. When set,
	// `piracy_general_search` Records come from it (preferred when both are set) instead of the
	// capture table: every row whose task-id column is one of the row's TaskIDs, all its columns as
	// fields, in TaskIDs order. A missing file, table or column stops the worker at start.
	RecordsSQLite string `env:"WEBHOOK_RECORDS_SQLITE"`
	// Table of that database holding the records (a plain identifier).
	RecordsSQLiteTable string `env:"WEBHOOK_RECORDS_SQLITE_TABLE" envDefault:"capture_records"`
	// Its TaskID column (a plain identifier; INTEGER or TEXT).
	RecordsSQLiteTaskID string `env:"WEBHOOK_RECORDS_SQLITE_TASKID_COLUMN" envDefault:"task_id"`

	// Receiver of the payloads (POST JSON, 2xx = success).
	SummaryWebhookURL string `env:"SUMMARY_WEBHOOK_URL"`
	// Set to switch to Feishu custom-bot mode: text message with `timestamp` + `sign` (HMAC-SHA256 key
	// `timestamp+"\n"+secret`, empty message).
	SummaryWebhookSecret string `env:"SUMMARY_WEBHOOK_SECRET"`
	// Push timeout.
	SummaryWebhookTimeout time.Duration `env:"SUMMARY_WEBHOOK_TIMEOUT" envDefault:"15s"`

	// WebhookResultWorker schedule interval.
	SweepInterval time.Duration `env:"WEBHOOK_SWEEP_INTERVAL" envDefault:"30s"`
	// Durable-timer backoff between readiness checks of a row.
	ReadinessBackoff time.Duration `env:"WEBHOOK_READINESS_BACKOFF" envDefault:"15s"`
	// Upper bound of the growing backoff between readiness checks of a row.
	ReadinessBackoffMax time.Duration `env:"WEBHOOK_READINESS_BACKOFF_MAX" envDefault:"5m"`
	// A row whose tasks are not all success/error by then becomes `error` with a LastError naming
	// them.
	ReadinessDeadline time.Duration `env:"WEBHOOK_READINESS_DEADLINE" envDefault:"48h"`
	// Wait between failed pushes (3 failures → `error`).
	RetryBackoff time.Duration `env:"WEBHOOK_RETRY_BACKOFF" envDefault:"1m"`

	// Comma list of apps that get a WebhookResultCreator schedule (e.g. `kwai`).
	CreatorApps []string `env:"WEBHOOK_CREATOR_APPS" envSeparator:","`
	// Creator schedule interval.
	CreatorInterval time.Duration `env:"WEBHOOK_CREATOR_INTERVAL" envDefault:"1m"`
	// Creator also aggregates `单个链接采集` tasks per (GroupID, Date). Needs `单个链接采集` in Scene's options
	// and `error` in Status's options, else Feishu answers 1254018 InvalidFilter (the error names the
	// missing option).
	EnableSingleURLCapture bool `env:"WEBHOOK_ENABLE_SINGLE_URL_CAPTURE" envDefault:"false"`

	WebhookFields WebhookFields
	TaskFields    TaskFields
	DramaFields   DramaFields
	CaptureFields CaptureFields
}

// WebhookFields are the result table's column names (WEBHOOK_FIELD_*).
type WebhookFields struct {
	// Name of the result table's `BizType` column.
	BizType string `env:"WEBHOOK_FIELD_BIZTYPE" envDefault:"BizType"`
	// Name of the result table's `ParentTaskID` column.
	ParentTaskID string `env:"WEBHOOK_FIELD_PARENTTASKID" envDefault:"ParentTaskID"`
	// Name of the result table's `GroupID` column.
	GroupID string `env:"WEBHOOK_FIELD_GROUPID" envDefault:"GroupID"`
	// Name of the result table's `Status` column.
	Status string `env:"WEBHOOK_FIELD_STATUS" envDefault:"Status"`
	// Name of the result table's `TaskIDs` column.
	TaskIDs string `env:"WEBHOOK_FIELD_TASKIDS" envDefault:"TaskIDs"`
	// Name of the result table's `DramaInfo` column.
	DramaInfo string `env:"WEBHOOK_FIELD_DRAMAINFO" envDefault:"DramaInfo"`
	// Name of the result table's `UserInfo` column.
	UserInfo string `env:"WEBHOOK_FIELD_USERINFO" envDefault:"UserInfo"`
	// Name of the result table's `Records` column.
	Records string `env:"WEBHOOK_FIELD_RECORDS" envDefault:"Records"`
	// Name of the result table's `Date` column.
	Date string `env:"WEBHOOK_FIELD_DATE" envDefault:"Date"`
	// Name of the result table's `CreateAt` column.
	CreateAt string `env:"WEBHOOK_FIELD_CREATEAT" envDefault:"CreateAt"`
	// Name of the result table's `StartAt` column.
	StartAt string `env:"WEBHOOK_FIELD_STARTAT" envDefault:"StartAt"`
	// Name of the result table's `EndAt` column.
	EndAt string `env:"WEBHOOK_FIELD_ENDAT" envDefault:"EndAt"`
	// Name of the result table's `RetryCount` column.
	RetryCount string `env:"WEBHOOK_FIELD_RETRYCOUNT" envDefault:"RetryCount"`
	// Name of the result table's `LastError` column.
	LastError string `env:"WEBHOOK_FIELD_LASTERROR" envDefault:"LastError"`
}

// TaskFields are the task status table's column names (TASK_FIELD_*).
type TaskFields struct {
	// Name of the task status table's `TaskID` column.
	TaskID string `env:"TASK_FIELD_TASKID" envDefault:"TaskID"`
	// Name of the task status table's `ParentTaskID` column.
	ParentTaskID string `env:"TASK_FIELD_PARENTTASKID" envDefault:"ParentTaskID"`
	// Name of the task status table's `App` column.
	App string `env:"TASK_FIELD_APP" envDefault:"App"`
	// Name of the task status table's `Scene` column.
	Scene string `env:"TASK_FIELD_SCENE" envDefault:"Scene"`
	// Name of the task status table's `Status` column.
	Status string `env:"TASK_FIELD_STATUS" envDefault:"Status"`
	// Name of the task status table's `BookID` column.
	BookID string `env:"TASK_FIELD_BOOKID" envDefault:"BookID"`
	// Name of the task status table's `UserID` column.
	UserID string `env:"TASK_FIELD_USERID" envDefault:"UserID"`
	// Name of the task status table's `ItemID` column.
	ItemID string `env:"TASK_FIELD_ITEMID" envDefault:"ItemID"`
	// Name of the task status table's `Params` column.
	Params string `env:"TASK_FIELD_PARAMS" envDefault:"Params"`
	// Name of the task status table's `Datetime` column.
	Datetime string `env:"TASK_FIELD_DATETIME" envDefault:"Datetime"`
	// Name of the task status table's `RetryCount` column.
	RetryCount string `env:"TASK_FIELD_RETRYCOUNT" envDefault:"RetryCount"`
}

// DramaFields are the drama list table's column names (DRAMA_FIELD_*).
type DramaFields struct {
	// Name of the drama table's `短剧 ID` column.
	ID string `env:"DRAMA_FIELD_ID" envDefault:"短剧 ID"`
	// Name of the drama table's `短剧名称` column.
	Name string `env:"DRAMA_FIELD_NAME" envDefault:"短剧名称"`
}

// CaptureFields are the capture result table's column names (CAPTURE_FIELD_*).
type CaptureFields struct {
	// Name of the capture table's `TaskID` column.
	TaskID string `env:"CAPTURE_FIELD_TASKID" envDefault:"TaskID"`
	// Name of the capture table's `Scene` column.
	Scene string `env:"CAPTURE_FIELD_SCENE" envDefault:"Scene"`
	// Name of the capture table's `ItemID` column.
	ItemID string `env:"CAPTURE_FIELD_ITEMID" envDefault:"ItemID"`
	// Name of the capture table's `CapturedAt` column. The newest `CapturedAt` is the "latest" record.
	CapturedAt string `env:"CAPTURE_FIELD_CAPTUREDAT" envDefault:"CapturedAt"`
}

// sqlIdent is a table or column name that can be spliced into a query.
var sqlIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FeishuConfigured reports whether real (or explicitly given) Feishu credentials are set.
func (c *Webhook) FeishuConfigured() bool { return c.FeishuAppID != "" && c.FeishuAppSecret != "" }

// Location loads TimeZone.
func (c *Webhook) Location() (*time.Location, error) {
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("FEISHU_TIME_ZONE: %w", err)
	}
	return loc, nil
}

func (c *Webhook) validate() error {
	var errs []error
	if (c.FeishuAppID == "") != (c.FeishuAppSecret == "") {
		errs = append(errs, errors.New("FEISHU_APP_ID and FEISHU_APP_SECRET must be set together"))
	}
	if _, err := c.Location(); err != nil {
		errs = append(errs, err)
	}
	for name, v := range map[string]string{"FEISHU_BASE_URL": c.FeishuBaseURL, "SUMMARY_WEBHOOK_URL": c.SummaryWebhookURL} {
		if err := HTTPURL(name, v); err != nil {
			errs = append(errs, err)
		}
	}
	for name, d := range map[string]time.Duration{
		"WEBHOOK_SWEEP_INTERVAL": c.SweepInterval, "WEBHOOK_READINESS_BACKOFF": c.ReadinessBackoff,
		"WEBHOOK_READINESS_BACKOFF_MAX": c.ReadinessBackoffMax, "WEBHOOK_READINESS_DEADLINE": c.ReadinessDeadline,
		"WEBHOOK_RETRY_BACKOFF": c.RetryBackoff, "WEBHOOK_CREATOR_INTERVAL": c.CreatorInterval,
		"SUMMARY_WEBHOOK_TIMEOUT": c.SummaryWebhookTimeout, "FEISHU_REQUEST_TIMEOUT": c.FeishuTimeout,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %s must be positive", name, d))
		}
	}
	for name, v := range map[string]string{"WEBHOOK_RECORDS_SQLITE_TABLE": c.RecordsSQLiteTable,
		"WEBHOOK_RECORDS_SQLITE_TASKID_COLUMN": c.RecordsSQLiteTaskID} {
		if !sqlIdent.MatchString(v) {
			errs = append(errs, fmt.Errorf("%s: %q must be a plain SQL identifier (letters, digits, _)", name, v))
		}
	}
	if c.ReadinessBackoffMax < c.ReadinessBackoff {
		errs = append(errs, errors.New("WEBHOOK_READINESS_BACKOFF_MAX must be at least WEBHOOK_READINESS_BACKOFF"))
	}
	return errors.Join(errs...)
}
