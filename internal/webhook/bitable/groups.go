package bitable

import (
	"context"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
)

// CreateWebhookResultsForGroups creates the piracy_general_search rows after a 综合页搜索
// parent task finished and created its child tasks: one pending row per GroupID
// ({App}_{BookID}_{UserID} of the children), deduplicated on BizType+GroupID+Date. TaskIDs are
// the group's children plus every 综合页搜索 task of the same BookID on the same day;
// DramaInfo is the drama row whose 短剧 ID equals the BookID.
func (t *Tables) CreateWebhookResultsForGroups(ctx context.Context, parentTaskID string, now time.Time) (webhook.CreateResult, error) {
	tf := t.F.Task
	found, err := t.Tasks(ctx, []string{parentTaskID})
	if err != nil {
		return webhook.CreateResult{}, err
	}
	parent, ok := found[parentTaskID]
	if !ok {
		return webhook.CreateResult{}, &webhook.PayloadError{Reason: fmt.Sprintf("parent task %s not found in the task table", parentTaskID)}
	}
	kids, err := t.Client.Search(ctx, t.Task, feishu.SearchOptions{Filter: feishu.And([]feishu.Condition{feishu.Is(tf.ParentTaskID, parentTaskID)})})
	if err != nil {
		return webhook.CreateResult{}, fmt.Errorf("find child tasks of %s: %w", parentTaskID, err)
	}
	groups := map[string][]string{}
	var order []string
	books := map[string]string{} // group → BookID
	for _, r := range kids {
		tk := DecodeTask(r, tf)
		if tk.TaskID == "" {
			continue
		}
		if tk.App == "" {
			tk.App = parent.App
		}
		if tk.BookID == "" {
			tk.BookID = parent.BookID
		}
		g := tk.GroupID()
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], tk.TaskID)
		books[g] = tk.BookID
	}
	res := webhook.CreateResult{Scanned: len(kids)}
	if len(order) == 0 {
		return res, nil
	}
	dayMs := t.day(parent.Datetime)
	siblings, err := t.sameDaySearchTasks(ctx, parent, dayMs)
	if err != nil {
		return res, err
	}
	keys := make([]groupKey, len(order))
	for i, g := range order {
		keys[i] = groupKey{g, dayMs}
	}
	existing, err := t.existingGroupRows(ctx, webhook.BizPiracyGeneralSearch, keys)
	if err != nil {
		return res, err
	}
	var bookIDs []string
	for _, g := range order {
		bookIDs = append(bookIDs, books[g])
	}
	dramas, err := t.DramaInfo(ctx, webhook.MergeTaskIDs(bookIDs))
	if err != nil {
		return res, err
	}
	var rows []map[string]any
	for _, g := range order {
		if _, dup := existing[groupKey{g, dayMs}]; dup {
			res.Skipped++
			continue
		}
		ids := webhook.MergeTaskIDs(groups[g], siblings[books[g]], []string{parentTaskID})
		rows = append(rows, t.newRow(webhook.BizPiracyGeneralSearch, g, parentTaskID, ids, dramas[books[g]], dayMs, now))
	}
	if _, err := t.Client.BatchCreate(ctx, t.Webhook, rows); err != nil {
		return res, fmt.Errorf("create group rows: %w", err)
	}
	res.Created = len(rows)
	return res, nil
}

// sameDaySearchTasks returns, for the parent's BookID, the TaskIDs of all 综合页搜索 tasks on
// the parent's day.
func (t *Tables) sameDaySearchTasks(ctx context.Context, parent webhook.Task, dayMs int64) (map[string][]string, error) {
	out := map[string][]string{}
	if parent.BookID == "" {
		return out, nil
	}
	tf := t.F.Task
	conds := []feishu.Condition{feishu.Is(tf.Scene, webhook.SceneGeneralSearch), feishu.Is(tf.BookID, parent.BookID)}
	if dayMs > 0 {
		conds = append(conds, feishu.ExactDate(tf.Datetime, dayMs))
	}
	recs, err := t.Client.Search(ctx, t.Task, feishu.SearchOptions{Filter: feishu.And(conds)})
	if err != nil {
		return nil, fmt.Errorf("find same-day search tasks of book %s: %w", parent.BookID, err)
	}
	for _, r := range recs {
		tk := DecodeTask(r, tf)
		out[parent.BookID] = append(out[parent.BookID], tk.TaskID)
	}
	return out, nil
}
