package bitable

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
)

// newRow is the common part of a fresh pending row.
func (t *Tables) newRow(biz, groupID, parent string, ids []string, drama map[string]any, dayMs int64, now time.Time) map[string]any {
	f := t.F.Webhook
	m := map[string]any{
		f.BizType: biz, f.Status: webhook.StatusPending, f.TaskIDs: webhook.FormatTaskIDs(ids), f.DramaInfo: marshalInfo(drama),
		f.CreateAt: now.UnixMilli(), f.RetryCount: 0,
	}
	if groupID != "" {
		m[f.GroupID] = groupID
	}
	if parent != "" {
		m[f.ParentTaskID] = parent
	}
	if dayMs > 0 {
		m[f.Date] = dayMs
	}
	return m
}

// CreateVideoRows is the video_screen_capture creator: one pending row per successful
// 视频录屏采集 task with an ItemID (of app, when given) that has no row yet. Re-running it
// creates nothing new, because existing rows are looked up by TaskID first.
func (t *Tables) CreateVideoRows(ctx context.Context, app string, now time.Time) (webhook.CreateResult, error) {
	tf := t.F.Task
	conds := []feishu.Condition{feishu.Is(tf.Scene, webhook.SceneVideoCapture), feishu.Is(tf.Status, webhook.StatusSuccess), feishu.IsNotEmpty(tf.ItemID)}
	if app != "" {
		conds = append(conds, feishu.Is(tf.App, app))
	}
	recs, err := t.Client.Search(ctx, t.Task, feishu.SearchOptions{Filter: feishu.And(conds)})
	if err != nil {
		return webhook.CreateResult{}, fmt.Errorf("scan video capture tasks: %w", err)
	}
	var tasks []webhook.Task
	var ids []string
	for _, r := range recs {
		tk := DecodeTask(r, tf)
		if tk.TaskID == "" || slices.Contains(ids, tk.TaskID) {
			continue
		}
		tasks = append(tasks, tk)
		ids = append(ids, tk.TaskID)
	}
	res := webhook.CreateResult{Scanned: len(tasks)}
	if len(tasks) == 0 {
		return res, nil
	}
	existing, err := t.Client.SearchAnyOf(ctx, t.Webhook, t.F.Webhook.TaskIDs, ids,
		[]feishu.Condition{feishu.Is(t.F.Webhook.BizType, webhook.BizVideoScreenCapture)}, feishu.SearchOptions{FieldNames: []string{t.F.Webhook.TaskIDs}})
	if err != nil {
		return res, fmt.Errorf("find existing video rows: %w", err)
	}
	have := map[string]bool{}
	for _, r := range existing {
		have[r.Text(t.F.Webhook.TaskIDs)] = true
	}
	var books []string
	for _, tk := range tasks {
		if tk.BookID != "" && !have[tk.TaskID] {
			books = append(books, tk.BookID)
		}
	}
	dramas, err := t.DramaInfo(ctx, webhook.MergeTaskIDs(books))
	if err != nil {
		return res, err
	}
	var rows []map[string]any
	for _, tk := range tasks {
		if have[tk.TaskID] {
			res.Skipped++
			continue
		}
		group := ""
		if tk.BookID != "" && tk.UserID != "" {
			group = tk.GroupID()
		}
		rows = append(rows, t.newRow(webhook.BizVideoScreenCapture, group, "", []string{tk.TaskID}, dramas[tk.BookID], t.day(tk.Datetime), now))
	}
	if _, err := t.Client.BatchCreate(ctx, t.Webhook, rows); err != nil {
		return res, fmt.Errorf("create video rows: %w", err)
	}
	res.Created = len(rows)
	return res, nil
}

func (t *Tables) day(ms int64) int64 {
	if ms <= 0 {
		return 0
	}
	return feishu.TruncateDay(ms, t.loc())
}

// groupKey identifies an aggregated row: GroupID and day.
type groupKey struct {
	group string
	day   int64
}

// CreateSingleURLRows aggregates 单个链接采集 tasks into one row per (GroupID, Date). The scan
// filter: Scene is 单个链接采集, Datetime is ExactDate(scanDate) when given, and
// Status in {success, failed, error} as an `or` group — which Feishu rejects with InvalidFilter
// (1254018) when Scene/Status are select fields lacking those options; the error then names
// the missing option. Pending rows whose group gained tasks get their TaskIDs extended.
func (t *Tables) CreateSingleURLRows(ctx context.Context, scanDate string, now time.Time) (webhook.CreateResult, error) {
	tf := t.F.Task
	conds := []feishu.Condition{feishu.Is(tf.Scene, webhook.SceneSingleURLCapture)}
	if scanDate != "" {
		c, err := feishu.ExactDay(tf.Datetime, scanDate, t.loc())
		if err != nil {
			return webhook.CreateResult{}, err
		}
		conds = append(conds, c)
	}
	recs, err := t.Client.Search(ctx, t.Task, feishu.SearchOptions{
		Filter: feishu.And(conds, feishu.AnyOf(tf.Status, webhook.StatusSuccess, webhook.StatusFailed, webhook.StatusError)),
	})
	if err != nil {
		return webhook.CreateResult{}, fmt.Errorf("scan single URL capture tasks (EnableSingleURLCapture): %w", err)
	}
	groups := map[groupKey][]string{}
	var order []groupKey
	for _, r := range recs {
		tk := DecodeTask(r, tf)
		if tk.TaskID == "" {
			continue
		}
		k := groupKey{tk.GroupID(), t.day(tk.Datetime)}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = webhook.MergeTaskIDs(groups[k], []string{tk.TaskID})
	}
	res := webhook.CreateResult{Scanned: len(recs)}
	if len(order) == 0 {
		return res, nil
	}
	existing, err := t.existingGroupRows(ctx, webhook.BizSingleURLCapture, order)
	if err != nil {
		return res, err
	}
	var create []map[string]any
	var update []feishu.Record
	for _, k := range order {
		ids := groups[k]
		row, ok := existing[k]
		switch {
		case !ok:
			create = append(create, t.newRow(webhook.BizSingleURLCapture, k.group, "", ids, nil, k.day, now))
		case row.Status == webhook.StatusPending && len(webhook.MergeTaskIDs(row.TaskIDs, ids)) > len(row.TaskIDs):
			update = append(update, feishu.Record{ID: row.RecordID, Fields: map[string]any{
				t.F.Webhook.TaskIDs: webhook.FormatTaskIDs(webhook.MergeTaskIDs(row.TaskIDs, ids))}})
		default:
			res.Skipped++
		}
	}
	if _, err := t.Client.BatchCreate(ctx, t.Webhook, create); err != nil {
		return res, fmt.Errorf("create single URL rows: %w", err)
	}
	if err := t.Client.BatchUpdate(ctx, t.Webhook, update); err != nil {
		return res, fmt.Errorf("extend single URL rows: %w", err)
	}
	res.Created, res.Updated = len(create), len(update)
	return res, nil
}

// existingGroupRows finds rows of biz for the given (GroupID, day) keys.
func (t *Tables) existingGroupRows(ctx context.Context, biz string, keys []groupKey) (map[groupKey]webhook.Row, error) {
	var groups []string
	for _, k := range keys {
		if !slices.Contains(groups, k.group) {
			groups = append(groups, k.group)
		}
	}
	wf := t.F.Webhook
	recs, err := t.Client.SearchAnyOf(ctx, t.Webhook, wf.GroupID, groups, []feishu.Condition{feishu.Is(wf.BizType, biz)}, feishu.SearchOptions{})
	if err != nil {
		return nil, fmt.Errorf("find existing %s rows: %w", biz, err)
	}
	out := map[groupKey]webhook.Row{}
	for _, r := range recs {
		var day int64
		if ms, ok := feishu.Millis(r.Fields[wf.Date]); ok {
			day = t.day(ms)
		}
		out[groupKey{r.Text(wf.GroupID), day}] = DecodeRow(r, wf, t.loc())
	}
	return out, nil
}
