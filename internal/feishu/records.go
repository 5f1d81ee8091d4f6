package feishu

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkbitable "github.com/larksuite/oapi-sdk-go/v3/service/bitable/v1"
)

// Batch limits: Feishu rejects larger writes (1254104) and batch_get takes 100 ids.
const (
	MaxBatchWrite  = 500
	MaxBatchGet    = 100
	MaxSearchPage  = 500
	defaultPageLen = 500
)

// Record is one row: its id and its cells keyed by field name.
type Record struct {
	ID     string         `json:"record_id"`
	Fields map[string]any `json:"fields"`
}

// Text is the cell's plain text (see Text).
func (r Record) Text(field string) string { return Text(r.Fields[field]) }

// Sort orders search results.
type Sort struct {
	FieldName string `json:"field_name"`
	Desc      bool   `json:"desc"`
}

// SearchOptions narrows a search.
type SearchOptions struct {
	Filter     *Filter
	Sort       []Sort
	FieldNames []string
	PageSize   int // per request; 500 if zero
	Limit      int // stop after this many records; 0 = all
}

type searchBody struct {
	ViewID     string   `json:"view_id,omitempty"`
	FieldNames []string `json:"field_names,omitempty"`
	Sort       []Sort   `json:"sort,omitempty"`
	Filter     *Filter  `json:"filter,omitempty"`
}

type searchResp struct {
	larkcore.CodeError
	Data struct {
		Items     []Record `json:"items"`
		HasMore   bool     `json:"has_more"`
		PageToken *string  `json:"page_token"`
		Total     int      `json:"total"`
	} `json:"data"`
}

// Page is one page of a search.
type Page struct {
	Items []Record
	Next  string // page token of the next page; empty on the last
	Total int    // records matching the filter, all pages together
}

// Search returns every record matching opts, following page_token until it is absent. The
// body is posted raw rather than through the SDK's typed request because the SDK drops the
// empty value of isEmpty/isNotEmpty conditions.
func (c *Client) Search(ctx context.Context, t Table, opts SearchOptions) ([]Record, error) {
	var out []Record
	pageToken := ""
	for {
		p, err := c.SearchPage(ctx, t, opts, pageToken)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if opts.Limit > 0 && len(out) >= opts.Limit {
			return out[:opts.Limit], nil
		}
		if p.Next == "" {
			return out, nil
		}
		pageToken = p.Next
	}
}

// SearchPage reads one page of a search (the first when pageToken is empty).
func (c *Client) SearchPage(ctx context.Context, t Table, opts SearchOptions, pageToken string) (Page, error) {
	if err := opts.Filter.Validate(); err != nil {
		return Page{}, fmt.Errorf("feishu search %s: %w", t.TableID, err)
	}
	size := opts.PageSize
	if size <= 0 || size > MaxSearchPage {
		size = defaultPageLen
	}
	if opts.Limit > 0 && opts.Limit < size {
		size = opts.Limit
	}
	body := searchBody{ViewID: t.ViewID, FieldNames: opts.FieldNames, Sort: opts.Sort, Filter: opts.Filter}
	q := url.Values{"page_size": {fmt.Sprint(size)}}
	if pageToken != "" {
		q.Set("page_token", pageToken)
	}
	path := fmt.Sprintf("/open-apis/bitable/v1/apps/%s/tables/%s/records/search?%s",
		url.PathEscape(t.AppToken), url.PathEscape(t.TableID), q.Encode())
	var resp searchResp
	err := c.call(ctx, "search "+t.TableID, func(opt larkcore.RequestOptionFunc) (result, error) {
		raw, err := c.sdk.Post(ctx, path, body, larkcore.AccessTokenTypeTenant, opt)
		if err != nil {
			return result{}, err
		}
		resp = searchResp{}
		if err := json.Unmarshal(raw.RawBody, &resp); err != nil {
			return result{}, fmt.Errorf("decode search response: %w", err)
		}
		return result{api: raw, code: resp.Code, msg: resp.Msg}, nil
	})
	if err != nil {
		return Page{}, c.explain(ctx, t, opts.Filter, err)
	}
	p := Page{Items: resp.Data.Items, Total: resp.Data.Total}
	if resp.Data.PageToken != nil && len(resp.Data.Items) > 0 {
		p.Next = *resp.Data.PageToken
	}
	return p, nil
}

// SearchAnyOf finds the records whose field equals one of values (and-ed with base), with as
// few searches as Feishu's filter limits allow (see SplitAnyOf). Results of the split searches
// are merged in order and de-duplicated by record id.
func (c *Client) SearchAnyOf(ctx context.Context, t Table, field string, values []string, base []Condition, opts SearchOptions) ([]Record, error) {
	filters, err := SplitAnyOf(field, values, base)
	if err != nil {
		return nil, fmt.Errorf("feishu search %s: %w", t.TableID, err)
	}
	var out []Record
	seen := map[string]bool{}
	for _, f := range filters {
		o := opts
		o.Filter = f
		recs, err := c.Search(ctx, t, o)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if !seen[r.ID] {
				seen[r.ID] = true
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// Get reads one record.
func (c *Client) Get(ctx context.Context, t Table, recordID string) (Record, error) {
	req := larkbitable.NewGetAppTableRecordReqBuilder().AppToken(t.AppToken).TableId(t.TableID).RecordId(recordID).Build()
	var rec Record
	err := c.call(ctx, "get "+t.TableID+"/"+recordID, func(opt larkcore.RequestOptionFunc) (result, error) {
		resp, err := c.sdk.Bitable.V1.AppTableRecord.Get(ctx, req, opt)
		if err != nil {
			return result{}, err
		}
		if resp.Success() && resp.Data != nil && resp.Data.Record != nil {
			rec = fromSDK(resp.Data.Record)
		}
		return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
	})
	return rec, err
}

// BatchGet reads records by id in chunks of 100; ids Feishu reports absent are skipped.
func (c *Client) BatchGet(ctx context.Context, t Table, ids []string) ([]Record, error) {
	var out []Record
	for start := 0; start < len(ids); start += MaxBatchGet {
		chunk := ids[start:min(start+MaxBatchGet, len(ids))]
		req := larkbitable.NewBatchGetAppTableRecordReqBuilder().AppToken(t.AppToken).TableId(t.TableID).
			Body(&larkbitable.BatchGetAppTableRecordReqBody{RecordIds: chunk}).Build()
		err := c.call(ctx, "batch_get "+t.TableID, func(opt larkcore.RequestOptionFunc) (result, error) {
			resp, err := c.sdk.Bitable.V1.AppTableRecord.BatchGet(ctx, req, opt)
			if err != nil {
				return result{}, err
			}
			if resp.Success() && resp.Data != nil {
				for _, r := range resp.Data.Records {
					out = append(out, fromSDK(r))
				}
			}
			return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Create adds one record and returns its id.
func (c *Client) Create(ctx context.Context, t Table, fields map[string]any) (string, error) {
	req := larkbitable.NewCreateAppTableRecordReqBuilder().AppToken(t.AppToken).TableId(t.TableID).
		AppTableRecord(&larkbitable.AppTableRecord{Fields: fields}).Build()
	var id string
	err := c.call(ctx, "create "+t.TableID, func(opt larkcore.RequestOptionFunc) (result, error) {
		resp, err := c.sdk.Bitable.V1.AppTableRecord.Create(ctx, req, opt)
		if err != nil {
			return result{}, err
		}
		if resp.Success() && resp.Data != nil && resp.Data.Record != nil && resp.Data.Record.RecordId != nil {
			id = *resp.Data.Record.RecordId
		}
		return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
	})
	return id, err
}

// Update changes the given fields of one record (PUT with only those fields).
func (c *Client) Update(ctx context.Context, t Table, recordID string, fields map[string]any) error {
	req := larkbitable.NewUpdateAppTableRecordReqBuilder().AppToken(t.AppToken).TableId(t.TableID).RecordId(recordID).
		AppTableRecord(&larkbitable.AppTableRecord{Fields: fields}).Build()
	return c.call(ctx, "update "+t.TableID+"/"+recordID, func(opt larkcore.RequestOptionFunc) (result, error) {
		resp, err := c.sdk.Bitable.V1.AppTableRecord.Update(ctx, req, opt)
		if err != nil {
			return result{}, err
		}
		return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
	})
}

// BatchCreate adds records in chunks of 500 and returns their ids in input order.
func (c *Client) BatchCreate(ctx context.Context, t Table, rows []map[string]any) ([]string, error) {
	var ids []string
	for start := 0; start < len(rows); start += MaxBatchWrite {
		chunk := rows[start:min(start+MaxBatchWrite, len(rows))]
		recs := make([]*larkbitable.AppTableRecord, len(chunk))
		for i, f := range chunk {
			recs[i] = &larkbitable.AppTableRecord{Fields: f}
		}
		req := larkbitable.NewBatchCreateAppTableRecordReqBuilder().AppToken(t.AppToken).TableId(t.TableID).
			Body(&larkbitable.BatchCreateAppTableRecordReqBody{Records: recs}).Build()
		err := c.call(ctx, "batch_create "+t.TableID, func(opt larkcore.RequestOptionFunc) (result, error) {
			resp, err := c.sdk.Bitable.V1.AppTableRecord.BatchCreate(ctx, req, opt)
			if err != nil {
				return result{}, err
			}
			if resp.Success() && resp.Data != nil {
				for _, r := range resp.Data.Records {
					ids = append(ids, fromSDK(r).ID)
				}
			}
			return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
		})
		if err != nil {
			return ids, err
		}
	}
	return ids, nil
}

// BatchUpdate writes records (id + changed fields) in chunks of 500.
func (c *Client) BatchUpdate(ctx context.Context, t Table, rows []Record) error {
	for start := 0; start < len(rows); start += MaxBatchWrite {
		chunk := rows[start:min(start+MaxBatchWrite, len(rows))]
		recs := make([]*larkbitable.AppTableRecord, len(chunk))
		for i, r := range chunk {
			recs[i] = &larkbitable.AppTableRecord{RecordId: &chunk[i].ID, Fields: r.Fields}
		}
		req := larkbitable.NewBatchUpdateAppTableRecordReqBuilder().AppToken(t.AppToken).TableId(t.TableID).
			Body(&larkbitable.BatchUpdateAppTableRecordReqBody{Records: recs}).Build()
		err := c.call(ctx, "batch_update "+t.TableID, func(opt larkcore.RequestOptionFunc) (result, error) {
			resp, err := c.sdk.Bitable.V1.AppTableRecord.BatchUpdate(ctx, req, opt)
			if err != nil {
				return result{}, err
			}
			return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func fromSDK(r *larkbitable.AppTableRecord) Record {
	rec := Record{Fields: r.Fields}
	if r.RecordId != nil {
		rec.ID = *r.RecordId
	}
	if rec.Fields == nil {
		rec.Fields = map[string]any{}
	}
	return rec
}
