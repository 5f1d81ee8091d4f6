package bitable

import (
	"strings"
	"time"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
)

// DecodeRow reads a result-table record.
func DecodeRow(rec feishu.Record, f webhook.WebhookFieldNames, loc *time.Location) webhook.Row {
	r := webhook.Row{
		RecordID:     rec.ID,
		BizType:      strings.TrimSpace(rec.Text(f.BizType)),
		ParentTaskID: strings.TrimSpace(rec.Text(f.ParentTaskID)),
		GroupID:      strings.TrimSpace(rec.Text(f.GroupID)),
		Status:       strings.TrimSpace(rec.Text(f.Status)),
		DramaInfo:    rec.Text(f.DramaInfo),
		UserInfo:     rec.Text(f.UserInfo),
		LastError:    rec.Text(f.LastError),
	}
	ids, err := webhook.ParseTaskIDs(rec.Text(f.TaskIDs))
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
	if ms, ok := feishu.Millis(rec.Fields[f.EndAt]); ok && ms > 0 {
		r.EndAt = ms
	}
	if r.Status == "" {
		r.Status = webhook.StatusPending
	}
	return r
}

// DecodeTask reads a task-table record.
func DecodeTask(rec feishu.Record, f webhook.TaskFieldNames) webhook.Task {
	t := webhook.Task{
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
