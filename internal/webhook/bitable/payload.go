package bitable

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
)

// BuildPayload builds the payload for row from the task rows already read for readiness.
func (t *Tables) BuildPayload(ctx context.Context, row webhook.Row, tasks map[string]webhook.Task) (*webhook.Payload, error) {
	p := &webhook.Payload{BizType: row.BizType, RecordID: row.RecordID, GroupID: row.GroupID, ParentTaskID: row.ParentTaskID,
		TaskIDs: row.TaskIDs, Date: row.Date, Drama: dramaFrom(row.DramaInfo), Records: []map[string]any{}}
	var err error
	switch row.BizType {
	case webhook.BizPiracyGeneralSearch:
		p.Records, err = t.captureByTaskIDs(ctx, row.TaskIDs)
	case webhook.BizVideoScreenCapture:
		err = t.videoPayload(ctx, p, row, tasks)
	case webhook.BizSingleURLCapture:
		for _, id := range row.TaskIDs {
			p.Tasks = append(p.Tasks, tasks[id].Summary())
		}
	default:
		return nil, &webhook.PayloadError{Reason: fmt.Sprintf("unknown BizType %q", row.BizType)}
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
// one is configured (it is preferred when both are), else from the Feishu capture result table.
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
func (t *Tables) videoPayload(ctx context.Context, p *webhook.Payload, row webhook.Row, tasks map[string]webhook.Task) error {
	if len(row.TaskIDs) == 0 {
		return &webhook.PayloadError{Reason: "video_screen_capture row has no TaskID"}
	}
	tk, ok := tasks[row.TaskIDs[0]]
	if !ok {
		return &webhook.PayloadError{Reason: fmt.Sprintf("task %s not found in the task table", row.TaskIDs[0])}
	}
	s := tk.Summary()
	p.Task = &s
	if tk.ItemID == "" {
		return &webhook.PayloadError{Reason: fmt.Sprintf("task %s has no ItemID, its capture record cannot be found", tk.TaskID)}
	}
	if t.Capture == nil {
		return nil
	}
	f := t.F.Capture
	recs, err := t.Client.Search(ctx, *t.Capture, feishu.SearchOptions{
		Filter: feishu.And([]feishu.Condition{feishu.Is(f.Scene, webhook.SceneVideoCapture), feishu.Is(f.ItemID, tk.ItemID)}),
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
