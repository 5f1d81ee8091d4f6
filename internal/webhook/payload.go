package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/taskloom/taskloom/internal/feishu"
)

// Payload is what the summary receiver gets: the drama fields plus the flattened records,
// with the row's keys so the receiver can correlate.
type Payload struct {
	BizType      string           `json:"biz_type"`
	RecordID     string           `json:"record_id"`
	GroupID      string           `json:"group_id,omitempty"`
	ParentTaskID string           `json:"parent_task_id,omitempty"`
	TaskIDs      []string         `json:"task_ids"`
	Date         string           `json:"date,omitempty"`
	Drama        map[string]any   `json:"drama"`
	Records      []map[string]any `json:"records"`
	Task         *TaskSummary     `json:"task,omitempty"`
	Tasks        []TaskSummary    `json:"tasks,omitempty"`
}

// TaskSummary is a task's state as pushed.
type TaskSummary struct {
	TaskID string `json:"task_id"`
	App    string `json:"app,omitempty"`
	Scene  string `json:"scene,omitempty"`
	Status string `json:"status"`
	ItemID string `json:"item_id,omitempty"`
	Params string `json:"params,omitempty"`
	BookID string `json:"book_id,omitempty"`
	UserID string `json:"user_id,omitempty"`
}

func summary(t Task) TaskSummary {
	return TaskSummary{TaskID: t.TaskID, App: t.App, Scene: t.Scene, Status: t.Status, ItemID: t.ItemID,
		Params: t.Params, BookID: t.BookID, UserID: t.UserID}
}

// PayloadError is a row whose payload cannot be built from its data (for example a video task
// without ItemID). It counts as a failed attempt rather than an infrastructure error.
type PayloadError struct{ Reason string }

func (e *PayloadError) Error() string { return e.Reason }

// BuildPayload builds the payload for row from the task rows already read for readiness.
func (t *Tables) BuildPayload(ctx context.Context, row Row, tasks map[string]Task) (*Payload, error) {
	p := &Payload{BizType: row.BizType, RecordID: row.RecordID, GroupID: row.GroupID, ParentTaskID: row.ParentTaskID,
		TaskIDs: row.TaskIDs, Date: row.Date, Drama: dramaFrom(row.DramaInfo), Records: []map[string]any{}}
	var err error
	switch row.BizType {
	case BizPiracyGeneralSearch:
		p.Records, err = t.captureByTaskIDs(ctx, row.TaskIDs)
	case BizVideoScreenCapture:
		err = t.videoPayload(ctx, p, row, tasks)
	case BizSingleURLCapture:
		for _, id := range row.TaskIDs {
			p.Tasks = append(p.Tasks, summary(tasks[id]))
		}
	default:
		return nil, &PayloadError{Reason: fmt.Sprintf("unknown BizType %q", row.BizType)}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// dramaFrom parses DramaInfo (the drama row's fields as JSON); empty or invalid → {}.
func dramaFrom(info string) map[string]any {
	m := map[string]any{}
	if strings.TrimSpace(info) == "" {
		return m
	}
	if err := json.Unmarshal([]byte(info), &m); err != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// captureByTaskIDs collects the capture rows of all TaskIDs: from the capture side's local database when
// one is configured (the seed's preferred source), else from the Feishu capture result table.
func (t *Tables) captureByTaskIDs(ctx context.Context, ids []string) ([]map[string]any, error) {
	if t.Records != nil {
		return t.Records.ByTaskIDs(ctx, ids)
	}
	if t.Capture == nil {
		return []map[string]any{}, nil
	}
	recs, err := t.Client.SearchAnyOf(ctx, *t.Capture, t.F.Capture.TaskID, ids, nil, feishu.SearchOptions{})
	if err != nil {
		return nil, fmt.Errorf("read capture records: %w", err)
	}
	out := make([]map[string]any, 0, len(recs))
	for _, r := range recs {
		out = append(out, PlainFields(r.Fields))
	}
	return out, nil
}

// videoPayload: the task row gives App/Scene/Params/ItemID; Records is the newest capture row
// with Scene=视频录屏采集 and that ItemID.
func (t *Tables) videoPayload(ctx context.Context, p *Payload, row Row, tasks map[string]Task) error {
	if len(row.TaskIDs) == 0 {
		return &PayloadError{Reason: "video_screen_capture row has no TaskID"}
	}
	tk, ok := tasks[row.TaskIDs[0]]
	if !ok {
		return &PayloadError{Reason: fmt.Sprintf("task %s not found in the task table", row.TaskIDs[0])}
	}
	s := summary(tk)
	p.Task = &s
	if tk.ItemID == "" {
		return &PayloadError{Reason: fmt.Sprintf("task %s has no ItemID, its capture record cannot be found", tk.TaskID)}
	}
	if t.Capture == nil {
		return nil
	}
	f := t.F.Capture
	recs, err := t.Client.Search(ctx, *t.Capture, feishu.SearchOptions{
		Filter: feishu.And([]feishu.Condition{feishu.Is(f.Scene, SceneVideoCapture), feishu.Is(f.ItemID, tk.ItemID)}),
		Sort:   []feishu.Sort{{FieldName: f.CapturedAt, Desc: true}},
		Limit:  1,
	})
	if err != nil {
		return fmt.Errorf("read capture record of item %s: %w", tk.ItemID, err)
	}
	for _, r := range recs {
		p.Records = append(p.Records, PlainFields(r.Fields))
	}
	return nil
}
