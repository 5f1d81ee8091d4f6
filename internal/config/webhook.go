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
	// Feishu app credentials. Empty in dev mode means the dev stack's Bitable emulator.
	FeishuAppID     string `env:"FEISHU_APP_ID"`
	FeishuAppSecret string `env:"FEISHU_APP_SECRET"`
	// FeishuBaseURL is the Open API origin (the emulator's URL in dev).
	FeishuBaseURL string `env:"FEISHU_BASE_URL" envDefault:"https://open.feishu.cn"`
	// FeishuTimeout bounds one Open API request (the SDK's request timeout); a request past it
	// fails and is retried like any transient error.
	FeishuTimeout time.Duration `env:"FEISHU_REQUEST_TIMEOUT" envDefault:"30s"`
	// TimeZone is the tables' document time zone; Date/Datetime days are cut in it.
	TimeZone string `env:"FEISHU_TIME_ZONE" envDefault:"Asia/Shanghai"`

	TaskBitableURL    string `env:"TASK_BITABLE_URL"`
	WebhookBitableURL string `env:"WEBHOOK_BITABLE_URL"`
	DramaBitableURL   string `env:"DRAMA_BITABLE_URL"`
	// CaptureBitableURL is the capture result table the Records of a payload come from.
	CaptureBitableURL string `env:"CAPTURE_BITABLE_URL"`

	// RecordsSQLite is a local SQLite database of capture records (read-only); when set it is
	// where piracy_general_search Records come from instead of the capture table.
	RecordsSQLite       string `env:"WEBHOOK_RECORDS_SQLITE"`
	RecordsSQLiteTable  string `env:"WEBHOOK_RECORDS_SQLITE_TABLE" envDefault:"capture_records"`
	RecordsSQLiteTaskID string `env:"WEBHOOK_RECORDS_SQLITE_TASKID_COLUMN" envDefault:"task_id"`

	SummaryWebhookURL string `env:"SUMMARY_WEBHOOK_URL"`
	// SummaryWebhookSecret switches the push to Feishu custom-bot mode: the payload is sent
	// as a text message with the bot's timestamp+sign.
	SummaryWebhookSecret  string        `env:"SUMMARY_WEBHOOK_SECRET"`
	SummaryWebhookTimeout time.Duration `env:"SUMMARY_WEBHOOK_TIMEOUT" envDefault:"15s"`

	// SweepInterval is how often WebhookResultWorker scans for pending/failed rows.
	SweepInterval time.Duration `env:"WEBHOOK_SWEEP_INTERVAL" envDefault:"30s"`
	// ReadinessBackoff/ReadinessBackoffMax shape the durable wait between readiness checks.
	ReadinessBackoff    time.Duration `env:"WEBHOOK_READINESS_BACKOFF" envDefault:"15s"`
	ReadinessBackoffMax time.Duration `env:"WEBHOOK_READINESS_BACKOFF_MAX" envDefault:"5m"`
	// ReadinessDeadline ends a row in `error` when its tasks are not all finished by then.
	ReadinessDeadline time.Duration `env:"WEBHOOK_READINESS_DEADLINE" envDefault:"48h"`
	// RetryBackoff is the wait between failed pushes of one row.
	RetryBackoff time.Duration `env:"WEBHOOK_RETRY_BACKOFF" envDefault:"1m"`

	// CreatorApps lists the apps that get a WebhookResultCreator schedule (e.g. kwai).
	CreatorApps     []string      `env:"WEBHOOK_CREATOR_APPS" envSeparator:","`
	CreatorInterval time.Duration `env:"WEBHOOK_CREATOR_INTERVAL" envDefault:"1m"`
	// EnableSingleURLCapture makes the creator aggregate 单个链接采集 tasks per (GroupID, Date).
	EnableSingleURLCapture bool `env:"WEBHOOK_ENABLE_SINGLE_URL_CAPTURE" envDefault:"false"`

	WebhookFields WebhookFields
	TaskFields    TaskFields
	DramaFields   DramaFields
	CaptureFields CaptureFields
}

// WebhookFields are the result table's column names (WEBHOOK_FIELD_*).
type WebhookFields struct {
	BizType      string `env:"WEBHOOK_FIELD_BIZTYPE" envDefault:"BizType"`
	ParentTaskID string `env:"WEBHOOK_FIELD_PARENTTASKID" envDefault:"ParentTaskID"`
	GroupID      string `env:"WEBHOOK_FIELD_GROUPID" envDefault:"GroupID"`
	Status       string `env:"WEBHOOK_FIELD_STATUS" envDefault:"Status"`
	TaskIDs      string `env:"WEBHOOK_FIELD_TASKIDS" envDefault:"TaskIDs"`
	DramaInfo    string `env:"WEBHOOK_FIELD_DRAMAINFO" envDefault:"DramaInfo"`
	UserInfo     string `env:"WEBHOOK_FIELD_USERINFO" envDefault:"UserInfo"`
	Records      string `env:"WEBHOOK_FIELD_RECORDS" envDefault:"Records"`
	Date         string `env:"WEBHOOK_FIELD_DATE" envDefault:"Date"`
	CreateAt     string `env:"WEBHOOK_FIELD_CREATEAT" envDefault:"CreateAt"`
	StartAt      string `env:"WEBHOOK_FIELD_STARTAT" envDefault:"StartAt"`
	EndAt        string `env:"WEBHOOK_FIELD_ENDAT" envDefault:"EndAt"`
	RetryCount   string `env:"WEBHOOK_FIELD_RETRYCOUNT" envDefault:"RetryCount"`
	LastError    string `env:"WEBHOOK_FIELD_LASTERROR" envDefault:"LastError"`
}

// TaskFields are the task status table's column names (TASK_FIELD_*).
type TaskFields struct {
	TaskID       string `env:"TASK_FIELD_TASKID" envDefault:"TaskID"`
	ParentTaskID string `env:"TASK_FIELD_PARENTTASKID" envDefault:"ParentTaskID"`
	App          string `env:"TASK_FIELD_APP" envDefault:"App"`
	Scene        string `env:"TASK_FIELD_SCENE" envDefault:"Scene"`
	Status       string `env:"TASK_FIELD_STATUS" envDefault:"Status"`
	BookID       string `env:"TASK_FIELD_BOOKID" envDefault:"BookID"`
	UserID       string `env:"TASK_FIELD_USERID" envDefault:"UserID"`
	ItemID       string `env:"TASK_FIELD_ITEMID" envDefault:"ItemID"`
	Params       string `env:"TASK_FIELD_PARAMS" envDefault:"Params"`
	Datetime     string `env:"TASK_FIELD_DATETIME" envDefault:"Datetime"`
	RetryCount   string `env:"TASK_FIELD_RETRYCOUNT" envDefault:"RetryCount"`
}

// DramaFields are the drama list table's column names (DRAMA_FIELD_*).
type DramaFields struct {
	ID   string `env:"DRAMA_FIELD_ID" envDefault:"短剧 ID"`
	Name string `env:"DRAMA_FIELD_NAME" envDefault:"短剧名称"`
}

// CaptureFields are the capture result table's column names (CAPTURE_FIELD_*).
type CaptureFields struct {
	TaskID     string `env:"CAPTURE_FIELD_TASKID" envDefault:"TaskID"`
	Scene      string `env:"CAPTURE_FIELD_SCENE" envDefault:"Scene"`
	ItemID     string `env:"CAPTURE_FIELD_ITEMID" envDefault:"ItemID"`
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
