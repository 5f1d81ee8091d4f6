// Package bitable is the webhook subsystem's Feishu Bitable I/O: it resolves the task, result,
// drama and capture tables, decodes their records into internal/webhook's types, and runs the
// reads and writes of the creators, the sweep's batches and the payload builder with as few
// Feishu calls as the filter limits allow.
package bitable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
)

// RecordSource yields capture records by TaskID from outside Feishu (internal/webhook/capturedb).
type RecordSource interface {
	ByTaskIDs(ctx context.Context, ids []string) ([]map[string]any, error)
}

// Tables is the webhook subsystem's view of Feishu: resolved tables plus column names.
type Tables struct {
	Client  *feishu.Client
	F       webhook.FieldNames
	Task    feishu.Table
	Webhook feishu.Table
	Drama   *feishu.Table
	Capture *feishu.Table
	// Records, when set, is where piracy_general_search records come from instead of Capture
	// (the capture side's local database).
	Records RecordSource
}

// Open resolves the links (wiki links cost one get_node per client, then are cached).
func Open(ctx context.Context, c *feishu.Client, u webhook.URLs, f webhook.FieldNames) (*Tables, error) {
	if u.Task == "" || u.Webhook == "" {
		return nil, errors.New("webhook: TASK_BITABLE_URL and WEBHOOK_BITABLE_URL are required")
	}
	t := &Tables{Client: c, F: f}
	var err error
	if t.Task, err = c.Resolve(ctx, u.Task); err != nil {
		return nil, fmt.Errorf("task table: %w", err)
	}
	if t.Webhook, err = c.Resolve(ctx, u.Webhook); err != nil {
		return nil, fmt.Errorf("webhook table: %w", err)
	}
	if u.Drama != "" {
		d, err := c.Resolve(ctx, u.Drama)
		if err != nil {
			return nil, fmt.Errorf("drama table: %w", err)
		}
		t.Drama = &d
	}
	if u.Capture != "" {
		cp, err := c.Resolve(ctx, u.Capture)
		if err != nil {
			return nil, fmt.Errorf("capture table: %w", err)
		}
		t.Capture = &cp
	}
	return t, nil
}

func (t *Tables) loc() *time.Location { return t.Client.Location() }

// WebhookTableID is the result table's id, the {table} of delivery workflow IDs.
func (t *Tables) WebhookTableID() string { return t.Webhook.TableID }

// CandidateRows returns result rows with Status pending or failed (error rows are skipped).
func (t *Tables) CandidateRows(ctx context.Context, rf webhook.RowFilter) ([]webhook.Row, error) {
	f := t.F.Webhook
	var conds []feishu.Condition
	if rf.GroupID != "" {
		conds = append(conds, feishu.Is(f.GroupID, rf.GroupID))
	}
	if rf.Date != "" {
		c, err := feishu.ExactDay(f.Date, rf.Date, t.loc())
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	recs, err := t.Client.Search(ctx, t.Webhook, feishu.SearchOptions{
		Filter: feishu.And(conds, feishu.AnyOf(f.Status, webhook.StatusPending, webhook.StatusFailed)),
	})
	if err != nil {
		return nil, fmt.Errorf("scan result table: %w", err)
	}
	rows := make([]webhook.Row, 0, len(recs))
	for _, r := range recs {
		rows = append(rows, DecodeRow(r, f, t.loc()))
	}
	return rows, nil
}

// RecoverRows returns the result rows with Status failed or error whose EndAt is in
// [since, until). Feishu compares date cells by whole days, so the search asks for the rows that
// ended on since's day or later and the exact bounds are kept here.
func (t *Tables) RecoverRows(ctx context.Context, since, until time.Time) ([]webhook.Row, error) {
	f := t.F.Webhook
	dayBefore := feishu.TruncateDay(since.AddDate(0, 0, -1).UnixMilli(), t.loc())
	after := feishu.Condition{FieldName: f.EndAt, Operator: feishu.OpIsGreater,
		Value: []string{"ExactDate", strconv.FormatInt(dayBefore, 10)}}
	recs, err := t.Client.Search(ctx, t.Webhook, feishu.SearchOptions{
		Filter: feishu.And([]feishu.Condition{after}, feishu.AnyOf(f.Status, webhook.StatusFailed, webhook.StatusError)),
	})
	if err != nil {
		return nil, fmt.Errorf("search failed and error rows of the result table: %w", err)
	}
	var rows []webhook.Row
	for _, r := range recs {
		if row := DecodeRow(r, f, t.loc()); webhook.Recoverable(row, since, until) {
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// ResetRow writes a result row back to pending with RetryCount 0 and no LastError, so that
// its delivery pushes it again: an error row is never picked up by a sweep, so an operator's reset
// to pending is the only way back (docs/operations.md "Redrive", webhook recover).
func (t *Tables) ResetRow(ctx context.Context, recordID string) error {
	f := t.F.Webhook
	if err := t.Client.Update(ctx, t.Webhook, recordID, map[string]any{
		f.Status: webhook.StatusPending, f.RetryCount: 0, f.LastError: "",
	}); err != nil {
		return fmt.Errorf("reset result row %s to pending: %w", recordID, err)
	}
	return nil
}

// GetRow reads one result row.
func (t *Tables) GetRow(ctx context.Context, recordID string) (webhook.Row, error) {
	rec, err := t.Client.Get(ctx, t.Webhook, recordID)
	if err != nil {
		return webhook.Row{}, fmt.Errorf("read result row %s: %w", recordID, err)
	}
	return DecodeRow(rec, t.F.Webhook, t.loc()), nil
}

// Tasks looks TaskIDs up in the task table with as few searches as Feishu's filter limits
// allow (feishu.SplitAnyOf), not one call per id. Ids without a row are absent from the map.
func (t *Tables) Tasks(ctx context.Context, ids []string) (map[string]webhook.Task, error) {
	out := map[string]webhook.Task{}
	if len(ids) == 0 {
		return out, nil
	}
	recs, err := t.Client.SearchAnyOf(ctx, t.Task, t.F.Task.TaskID, ids, nil, feishu.SearchOptions{})
	if err != nil {
		return nil, fmt.Errorf("look up %d tasks: %w", len(ids), err)
	}
	for _, r := range recs {
		tk := DecodeTask(r, t.F.Task)
		out[tk.TaskID] = tk
	}
	return out, nil
}

// WriteBack applies a transition to a result row.
func (t *Tables) WriteBack(ctx context.Context, recordID string, tr webhook.Transition) error {
	if err := t.Client.Update(ctx, t.Webhook, recordID, tr.Fields(t.F.Webhook)); err != nil {
		return fmt.Errorf("write back result row %s: %w", recordID, err)
	}
	return nil
}

// DramaInfo returns the drama rows' fields (as plain values) keyed by 短剧 ID for bookIDs.
func (t *Tables) DramaInfo(ctx context.Context, bookIDs []string) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	if t.Drama == nil || len(bookIDs) == 0 {
		return out, nil
	}
	recs, err := t.Client.SearchAnyOf(ctx, *t.Drama, t.F.Drama.ID, bookIDs, nil, feishu.SearchOptions{})
	if err != nil {
		return nil, fmt.Errorf("look up dramas: %w", err)
	}
	for _, r := range recs {
		out[r.Text(t.F.Drama.ID)] = PlainFields(r.Fields)
	}
	return out, nil
}

// PlainFields turns cells into JSON-friendly plain values that keep their meaning (see
// feishu.PlainValue): text segments become strings, hyperlinks stay {link, text}, persons
// become lists of names, numbers, booleans and option lists stay as they are.
func PlainFields(fields map[string]any) map[string]any {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		out[k] = feishu.PlainValue(v)
	}
	return out
}

// marshalInfo serialises a drama row for the DramaInfo cell ("{}" when absent).
func marshalInfo(m map[string]any) string {
	if len(m) == 0 {
		return "{}"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(b)
}
