package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/feishu"
)

// URLs names the four Bitable tables by link. Drama and Capture are optional.
type URLs struct {
	Task    string `json:"task_url"`
	Webhook string `json:"webhook_url"`
	Drama   string `json:"drama_url,omitempty"`
	Capture string `json:"capture_url,omitempty"`
}

// RecordSource yields capture records by TaskID from outside Feishu (internal/capturedb).
type RecordSource interface {
	ByTaskIDs(ctx context.Context, ids []string) ([]map[string]any, error)
}

// Tables is the webhook subsystem's view of Feishu: resolved tables plus column names.
type Tables struct {
	Client  *feishu.Client
	F       FieldNames
	Task    feishu.Table
	Webhook feishu.Table
	Drama   *feishu.Table
	Capture *feishu.Table
	// Records, when set, is where piracy_general_search records come from instead of Capture
	// (the capture side's local database).
	Records RecordSource
}

// OpenTables resolves the links (wiki links cost one get_node per client, then are cached).
func OpenTables(ctx context.Context, c *feishu.Client, u URLs, f FieldNames) (*Tables, error) {
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

// RowFilter narrows the candidate scan (the CLI's --group-id / --date).
type RowFilter struct {
	GroupID string `json:"group_id,omitempty"`
	Date    string `json:"date,omitempty"` // YYYY-MM-DD
}

// CandidateRows returns result rows with Status pending or failed (error rows are skipped).
func (t *Tables) CandidateRows(ctx context.Context, rf RowFilter) ([]Row, error) {
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
		Filter: feishu.And(conds, feishu.AnyOf(f.Status, StatusPending, StatusFailed)),
	})
	if err != nil {
		return nil, fmt.Errorf("scan result table: %w", err)
	}
	rows := make([]Row, 0, len(recs))
	for _, r := range recs {
		rows = append(rows, DecodeRow(r, f, t.loc()))
	}
	return rows, nil
}

// GetRow reads one result row.
func (t *Tables) GetRow(ctx context.Context, recordID string) (Row, error) {
	rec, err := t.Client.Get(ctx, t.Webhook, recordID)
	if err != nil {
		return Row{}, fmt.Errorf("read result row %s: %w", recordID, err)
	}
	return DecodeRow(rec, t.F.Webhook, t.loc()), nil
}

// Tasks looks TaskIDs up in the task table with as few searches as Feishu's filter limits
// allow (feishu.SplitAnyOf), not one call per id. Ids without a row are absent from the map.
func (t *Tables) Tasks(ctx context.Context, ids []string) (map[string]Task, error) {
	out := map[string]Task{}
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

// Statuses maps each found TaskID to its Status.
func Statuses(tasks map[string]Task) map[string]string {
	m := make(map[string]string, len(tasks))
	for id, tk := range tasks {
		m[id] = tk.Status
	}
	return m
}

// WriteBack applies a transition to a result row.
func (t *Tables) WriteBack(ctx context.Context, recordID string, tr Transition) error {
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
