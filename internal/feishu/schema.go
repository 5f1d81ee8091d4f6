package feishu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkbitable "github.com/larksuite/oapi-sdk-go/v3/service/bitable/v1"
	larkwiki "github.com/larksuite/oapi-sdk-go/v3/service/wiki/v2"
)

// Field type codes used here.
const (
	FieldText         = 1
	FieldNumber       = 2
	FieldSingleSelect = 3
	FieldMultiSelect  = 4
	FieldDateTime     = 5
)

// Field describes one column.
type Field struct {
	Name    string
	Type    int
	Options []string // select options
}

// Fields lists a table's columns.
func (c *Client) Fields(ctx context.Context, t Table) ([]Field, error) {
	var out []Field
	err := eachPage(func(pageToken string) (next *string, err error) {
		b := larkbitable.NewListAppTableFieldReqBuilder().AppToken(t.AppToken).TableId(t.TableID).PageSize(100)
		if pageToken != "" {
			b.PageToken(pageToken)
		}
		req := b.Build()
		err = c.call(ctx, "fields "+t.TableID, func(opt larkcore.RequestOptionFunc) (result, error) {
			resp, err := c.sdk.Bitable.V1.AppTableField.List(ctx, req, opt)
			if err != nil {
				return result{}, err
			}
			if resp.Success() && resp.Data != nil {
				next = resp.Data.PageToken
				for _, f := range resp.Data.Items {
					out = append(out, fieldFromSDK(f))
				}
			}
			return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
		})
		return next, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachPage calls page with each page token of a listing ("" for the first) until an error or a
// page without a next token.
func eachPage(page func(pageToken string) (next *string, err error)) error {
	pageToken := ""
	for {
		next, err := page(pageToken)
		if err != nil {
			return err
		}
		if next == nil || *next == "" {
			return nil
		}
		pageToken = *next
	}
}

func fieldFromSDK(f *larkbitable.AppTableFieldForList) Field {
	var fd Field
	if f.FieldName != nil {
		fd.Name = *f.FieldName
	}
	if f.Type != nil {
		fd.Type = *f.Type
	}
	if f.Property != nil {
		for _, o := range f.Property.Options {
			if o.Name != nil {
				fd.Options = append(fd.Options, *o.Name)
			}
		}
	}
	return fd
}

// TableNames lists the tables of a base (id → name).
func (c *Client) TableNames(ctx context.Context, appToken string) (map[string]string, error) {
	out := map[string]string{}
	err := eachPage(func(pageToken string) (next *string, err error) {
		b := larkbitable.NewListAppTableReqBuilder().AppToken(appToken).PageSize(100)
		if pageToken != "" {
			b.PageToken(pageToken)
		}
		req := b.Build()
		err = c.call(ctx, "tables "+appToken, func(opt larkcore.RequestOptionFunc) (result, error) {
			resp, err := c.sdk.Bitable.V1.AppTable.List(ctx, req, opt)
			if err != nil {
				return result{}, err
			}
			if resp.Success() && resp.Data != nil {
				next = resp.Data.PageToken
				for _, t := range resp.Data.Items {
					if t.TableId != nil && t.Name != nil {
						out[*t.TableId] = *t.Name
					}
				}
			}
			return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
		})
		return next, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Resolve turns a table link into a Table, looking up wiki nodes once per client.
func (c *Client) Resolve(ctx context.Context, raw string) (Table, error) {
	u, err := ParseTableURL(raw)
	if err != nil {
		return Table{}, err
	}
	if u.Kind == KindBase {
		return Table{AppToken: u.Token, TableID: u.TableID, ViewID: u.ViewID}, nil
	}
	c.mu.Lock()
	app, ok := c.resolved[u.Token]
	c.mu.Unlock()
	if !ok {
		app, err = c.wikiBitable(ctx, u.Token)
		if err != nil {
			return Table{}, err
		}
		c.mu.Lock()
		c.resolved[u.Token] = app
		c.mu.Unlock()
	}
	return Table{AppToken: app.AppToken, TableID: u.TableID, ViewID: u.ViewID}, nil
}

func (c *Client) wikiBitable(ctx context.Context, node string) (Table, error) {
	req := larkwiki.NewGetNodeSpaceReqBuilder().Token(node).ObjType("wiki").Build()
	var objType, objToken string
	err := c.call(ctx, "wiki get_node "+node, func(opt larkcore.RequestOptionFunc) (result, error) {
		resp, err := c.sdk.Wiki.V2.Space.GetNode(ctx, req, opt)
		if err != nil {
			return result{}, err
		}
		if resp.Success() && resp.Data != nil && resp.Data.Node != nil {
			n := resp.Data.Node
			if n.ObjType != nil {
				objType = *n.ObjType
			}
			if n.ObjToken != nil {
				objToken = *n.ObjToken
			}
		}
		return result{api: resp.ApiResp, code: resp.Code, msg: resp.Msg}, nil
	})
	if err != nil {
		return Table{}, err
	}
	if objType != "bitable" || objToken == "" {
		return Table{}, fmt.Errorf("feishu wiki node %s is a %q, not a bitable", node, objType)
	}
	return Table{AppToken: objToken}, nil
}

// explain adds to an InvalidFilter answer which select field lacks which option, the most
// common cause (a task table whose Status has no "error" option), so the operator knows what
// to add to the table instead of seeing a bare 1254018.
func (c *Client) explain(ctx context.Context, t Table, f *Filter, err error) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != CodeInvalidFilter || f == nil {
		return err
	}
	fields, ferr := c.Fields(ctx, t)
	if ferr != nil {
		ae.Explanation = "the filter was rejected; listing the table's fields to find the cause failed: " + ferr.Error()
		return ae
	}
	ae.Explanation = ExplainInvalidFilter(fields, f)
	return ae
}

// ExplainInvalidFilter names the filter's fields that do not exist and the select values
// missing from their field's options.
func ExplainInvalidFilter(fields []Field, f *Filter) string {
	byName := map[string]Field{}
	for _, fd := range fields {
		byName[fd.Name] = fd
	}
	var problems []string
	seen := map[string]bool{}
	check := func(cond Condition) {
		fd, ok := byName[cond.FieldName]
		if !ok {
			p := fmt.Sprintf("field %q does not exist in the table", cond.FieldName)
			if !seen[p] {
				seen[p] = true
				problems = append(problems, p)
			}
			return
		}
		if fd.Type != FieldSingleSelect && fd.Type != FieldMultiSelect {
			return
		}
		for _, v := range cond.Value {
			if !slices.Contains(fd.Options, v) {
				p := fmt.Sprintf("select field %q has no option %q (options: %s)", fd.Name, v, strings.Join(fd.Options, ", "))
				if !seen[p] {
					seen[p] = true
					problems = append(problems, p)
				}
			}
		}
	}
	for _, cond := range f.Conditions {
		check(cond)
	}
	for _, g := range f.Children {
		for _, cond := range g.Conditions {
			check(cond)
		}
	}
	if len(problems) == 0 {
		return "Feishu rejected the filter (InvalidFilter); check that every filtered field exists and that single/multi-select fields contain the filtered values as options"
	}
	return strings.Join(problems, "; ") + " — Feishu rejects filters on single/multi-select fields whose options lack the value; add the missing option(s) to the field (most often Status needs an \"error\" option and Scene needs \"单个链接采集\") or turn the feature that sends this filter off"
}
