package webhook

import (
	"strings"
	"time"

	"github.com/taskloom/taskloom/internal/feishu"
)

// Row is a result-table row as the worker needs it.
type Row struct {
	RecordID     string   `json:"record_id"`
	BizType      string   `json:"biz_type"`
	ParentTaskID string   `json:"parent_task_id,omitempty"`
	GroupID      string   `json:"group_id,omitempty"`
	Status       string   `json:"status"`
	TaskIDs      []string `json:"task_ids"`
	DramaInfo    string   `json:"drama_info,omitempty"`
	UserInfo     string   `json:"user_info,omitempty"`
	Date         string   `json:"date,omitempty"` // YYYY-MM-DD in the table time zone
	HasStartAt   bool     `json:"has_start_at"`
	RetryCount   int      `json:"retry_count"`
	LastError    string   `json:"last_error,omitempty"`
	// BadTaskIDs holds the parse error of the TaskIDs cell; such a row cannot become ready.
	BadTaskIDs string `json:"bad_task_ids,omitempty"`
}

// DecodeRow reads a result-table record.
func DecodeRow(rec feishu.Record, f WebhookFieldNames, loc *time.Location) Row {
	r := Row{
		RecordID:     rec.ID,
		BizType:      strings.TrimSpace(rec.Text(f.BizType)),
		ParentTaskID: strings.TrimSpace(rec.Text(f.ParentTaskID)),
		GroupID:      strings.TrimSpace(rec.Text(f.GroupID)),
		Status:       strings.TrimSpace(rec.Text(f.Status)),
		DramaInfo:    rec.Text(f.DramaInfo),
		UserInfo:     rec.Text(f.UserInfo),
		LastError:    rec.Text(f.LastError),
	}
	ids, err := ParseTaskIDs(rec.Text(f.TaskIDs))
	if err != nil {
		r.BadTaskIDs = err.Error()
	}
	r.TaskIDs = ids
	if ms, ok := feishu.Millis(rec.Fields[f.Date]); ok {
		r.Date = feishu.DayOf(ms, loc)
	}
	if ms, ok := feishu.Millis(rec.Fields[f.StartAt]); ok && ms > 0 {
		r.HasStartAt = true
	}
	if n, ok := feishu.Number(rec.Fields[f.RetryCount]); ok && n > 0 {
		r.RetryCount = int(n)
	}
	if r.Status == "" {
		r.Status = StatusPending
	}
	return r
}

// Task is a task-table row.
type Task struct {
	RecordID     string `json:"record_id"`
	TaskID       string `json:"task_id"`
	ParentTaskID string `json:"parent_task_id,omitempty"`
	App          string `json:"app,omitempty"`
	Scene        string `json:"scene,omitempty"`
	Status       string `json:"status"`
	BookID       string `json:"book_id,omitempty"`
	UserID       string `json:"user_id,omitempty"`
	ItemID       string `json:"item_id,omitempty"`
	Params       string `json:"params,omitempty"`
	Datetime     int64  `json:"datetime,omitempty"` // ms
	RetryCount   int    `json:"retry_count"`
}

// DecodeTask reads a task-table record.
func DecodeTask(rec feishu.Record, f TaskFieldNames) Task {
	t := Task{
		RecordID:     rec.ID,
		TaskID:       strings.TrimSpace(rec.Text(f.TaskID)),
		ParentTaskID: strings.TrimSpace(rec.Text(f.ParentTaskID)),
		App:          strings.TrimSpace(rec.Text(f.App)),
		Scene:        strings.TrimSpace(rec.Text(f.Scene)),
		Status:       strings.TrimSpace(rec.Text(f.Status)),
		BookID:       strings.TrimSpace(rec.Text(f.BookID)),
		UserID:       strings.TrimSpace(rec.Text(f.UserID)),
		ItemID:       strings.TrimSpace(rec.Text(f.ItemID)),
		Params:       rec.Text(f.Params),
	}
	t.Datetime, _ = feishu.Millis(rec.Fields[f.Datetime])
	if n, ok := feishu.Number(rec.Fields[f.RetryCount]); ok && n > 0 {
		t.RetryCount = int(n)
	}
	return t
}

// GroupID is the task's `{App}_{BookID}_{UserID}`.
func (t Task) GroupID() string { return GroupID(t.App, t.BookID, t.UserID) }
