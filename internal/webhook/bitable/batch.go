package bitable

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
)

// GetRows re-reads result rows by record id with batch_get (100 ids per call); ids Feishu
// reports absent are missing from the map.
func (t *Tables) GetRows(ctx context.Context, ids []string) (map[string]webhook.Row, error) {
	recs, err := t.Client.BatchGet(ctx, t.Webhook, ids)
	if err != nil {
		return nil, fmt.Errorf("re-read %d result rows: %w", len(ids), err)
	}
	out := make(map[string]webhook.Row, len(recs))
	for _, r := range recs {
		out[r.ID] = DecodeRow(r, t.F.Webhook, t.loc())
	}
	return out, nil
}

// WriteBacks applies transitions to result rows with batch_update (500 rows per call).
func (t *Tables) WriteBacks(ctx context.Context, trs map[string]webhook.Transition) error {
	if len(trs) == 0 {
		return nil
	}
	recs := make([]feishu.Record, 0, len(trs))
	for id, tr := range trs {
		recs = append(recs, feishu.Record{ID: id, Fields: tr.Fields(t.F.Webhook)})
	}
	slices.SortFunc(recs, func(a, b feishu.Record) int { return cmp.Compare(a.ID, b.ID) })
	if err := t.Client.BatchUpdate(ctx, t.Webhook, recs); err != nil {
		return fmt.Errorf("write back %d result rows: %w", len(recs), err)
	}
	return nil
}

// dayScanMinSearches: below this many id searches, reading a whole day of tasks cannot pay off.
const dayScanMinSearches = 3

// TasksForRows reads the tasks of many rows with one set of searches (the sweep's batched
// readiness check). Per logical day of the rows, when the day's tasks fit in fewer pages of
// 500 than the id searches their TaskIDs need (measured by SplitAnyOf), the day is read page by
// page (Datetime is ExactDate); TaskIDs not found that way — other days, no Datetime — are
// looked up by id. The first page says how many tasks the day has, so a busy day costs one
// extra search at most before falling back to ids.
func (t *Tables) TasksForRows(ctx context.Context, rows []webhook.Row) (map[string]webhook.Task, error) {
	byDay := map[string][]string{}
	var all []string
	for _, r := range rows {
		byDay[r.Date] = append(byDay[r.Date], r.TaskIDs...)
		all = append(all, r.TaskIDs...)
	}
	out := map[string]webhook.Task{}
	for day, ids := range byDay {
		if day == "" {
			continue
		}
		if err := t.scanDay(ctx, day, webhook.MergeTaskIDs(ids), out); err != nil {
			return nil, err
		}
	}
	var missing []string
	for _, id := range webhook.MergeTaskIDs(all) {
		if _, ok := out[id]; !ok {
			missing = append(missing, id)
		}
	}
	rest, err := t.Tasks(ctx, missing)
	if err != nil {
		return nil, err
	}
	for id, tk := range rest {
		out[id] = tk
	}
	return out, nil
}

// scanDay adds to out the tasks among ids found by reading day's tasks, when that is cheaper
// than searching the ids. A filter Feishu rejects (a Datetime column that is not a date) only
// means the ids are searched instead.
func (t *Tables) scanDay(ctx context.Context, day string, ids []string, out map[string]webhook.Task) error {
	filters, err := feishu.SplitAnyOf(t.F.Task.TaskID, ids, nil)
	if err != nil || len(filters) < dayScanMinSearches {
		return nil
	}
	cond, err := feishu.ExactDay(t.F.Task.Datetime, day, t.loc())
	if err != nil {
		return nil
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	opts := feishu.SearchOptions{Filter: feishu.And([]feishu.Condition{cond}), PageSize: feishu.MaxSearchPage}
	token := ""
	for page := 0; ; page++ {
		p, err := t.Client.SearchPage(ctx, t.Task, opts, token)
		var ae *feishu.APIError
		if errors.As(err, &ae) && !ae.Retryable() {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the tasks of %s: %w", day, err)
		}
		if page == 0 && (p.Total+feishu.MaxSearchPage-1)/feishu.MaxSearchPage > len(filters) {
			return nil // a busy day: searching the ids is cheaper
		}
		for _, r := range p.Items {
			if tk := DecodeTask(r, t.F.Task); want[tk.TaskID] {
				out[tk.TaskID] = tk
			}
		}
		if p.Next == "" {
			return nil
		}
		token = p.Next
	}
}

// BuildPayloads builds the payloads of many ready rows. piracy_general_search rows read from
// the Feishu capture table share one set of searches for all their TaskIDs; everything else
// is built as BuildPayload builds it. A row whose payload cannot be built gets its error.
func (t *Tables) BuildPayloads(ctx context.Context, rows []webhook.Row, tasks map[string]webhook.Task) (map[string]*webhook.Payload, map[string]error, error) {
	captures, err := t.piracyCaptures(ctx, rows)
	if err != nil {
		return nil, nil, err
	}
	payloads, failures := map[string]*webhook.Payload{}, map[string]error{}
	for _, row := range rows {
		if captures != nil && row.BizType == webhook.BizPiracyGeneralSearch {
			p := &webhook.Payload{BizType: row.BizType, RecordID: row.RecordID, GroupID: row.GroupID, ParentTaskID: row.ParentTaskID,
				TaskIDs: row.TaskIDs, Date: row.Date, Drama: dramaFrom(row.DramaInfo), Records: []map[string]any{}}
			for _, id := range row.TaskIDs {
				p.Records = append(p.Records, captures[id]...)
			}
			payloads[row.RecordID] = p
			continue
		}
		p, err := t.BuildPayload(ctx, row, tasks)
		var pe *webhook.PayloadError
		switch {
		case errors.As(err, &pe):
			failures[row.RecordID] = err
		case err != nil:
			return nil, nil, err
		default:
			payloads[row.RecordID] = p
		}
	}
	return payloads, failures, nil
}

// piracyCaptures reads the Feishu capture rows of every piracy row's TaskIDs at once, grouped
// by TaskID; nil when no piracy row reads from the Feishu capture table.
func (t *Tables) piracyCaptures(ctx context.Context, rows []webhook.Row) (map[string][]map[string]any, error) {
	if t.Records != nil || t.Capture == nil {
		return nil, nil
	}
	var ids []string
	for _, r := range rows {
		if r.BizType == webhook.BizPiracyGeneralSearch {
			ids = append(ids, r.TaskIDs...)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	recs, err := t.Client.SearchAnyOf(ctx, *t.Capture, t.F.Capture.TaskID, webhook.MergeTaskIDs(ids), nil, feishu.SearchOptions{})
	if err != nil {
		return nil, fmt.Errorf("read capture records: %w", err)
	}
	out := map[string][]map[string]any{}
	for _, r := range recs {
		id := r.Text(t.F.Capture.TaskID)
		out[id] = append(out[id], PlainFields(r.Fields))
	}
	return out, nil
}
