package feishuemu

import (
	"net/http"
	"slices"
)

// apiErr is a Feishu-style error answer.
type apiErr struct {
	status int
	code   int
	msg    string
}

func badReq(code int, msg string) *apiErr {
	return &apiErr{status: http.StatusOK, code: code, msg: msg}
}

// coerce validates cells in the write format and returns them in the stored form. Unknown
// select options are created on the fly, as Feishu does on writes.
func (t *table) coerce(in map[string]any) (map[string]any, *apiErr) {
	out := make(map[string]any, len(in))
	for name, v := range in {
		f := t.byName[name]
		if f == nil {
			return nil, badReq(1254045, "FieldNameNotFound: "+name)
		}
		if v == nil {
			out[name] = nil
			continue
		}
		switch f.typ {
		case TypeText:
			s, ok := v.(string)
			if !ok {
				return nil, badReq(1254060, "TextFieldConvFail: "+name)
			}
			out[name] = s
		case TypeNumber:
			n, ok := v.(float64)
			if !ok {
				return nil, badReq(1254061, "NumberFieldConvFail: "+name)
			}
			out[name] = n
		case TypeSingleSelect:
			s, ok := v.(string)
			if !ok {
				return nil, badReq(1254062, "SingleSelectFieldConvFail: "+name)
			}
			f.addOption(s)
			out[name] = s
		case TypeMultiSelect:
			arr, ok := v.([]any)
			if !ok {
				return nil, badReq(1254063, "MultiSelectFieldConvFail: "+name)
			}
			vals := make([]any, 0, len(arr))
			for _, x := range arr {
				s, ok := x.(string)
				if !ok {
					return nil, badReq(1254063, "MultiSelectFieldConvFail: "+name)
				}
				f.addOption(s)
				vals = append(vals, s)
			}
			out[name] = vals
		case TypeDateTime:
			n, ok := v.(float64)
			if !ok || n < 0 {
				return nil, badReq(1254064, "DatetimeFieldConvFail: "+name)
			}
			out[name] = n
		case TypeCheckbox:
			b, ok := v.(bool)
			if !ok {
				return nil, badReq(1254065, "CheckboxFieldConvFail: "+name)
			}
			out[name] = b
		case TypeURL:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, badReq(1254068, "URLFieldConvFail: "+name)
			}
			out[name] = map[string]any{"link": m["link"], "text": m["text"]}
		default:
			return nil, badReq(1254001, "WrongRequestBody: field "+name+" is read-only")
		}
	}
	return out, nil
}

func (f *field) addOption(s string) {
	if !slices.Contains(f.options, s) {
		f.options = append(f.options, s)
	}
}

// value is the cell of r for f in the stored form (created-time columns are computed).
func (r *record) value(f *field) any {
	if f.typ == TypeCreatedTime {
		return float64(r.created)
	}
	return r.fields[f.name]
}

// render returns r's cells as Feishu returns them: text as segment arrays when segments is
// true (search, batch_get) and as plain strings otherwise (list/get without
// text_field_as_array). Empty cells are left out.
func (t *table) render(r *record, names []string, segments bool) map[string]any {
	out := map[string]any{}
	for _, f := range t.fields {
		if len(names) > 0 && !slices.Contains(names, f.name) {
			continue
		}
		v := r.value(f)
		if isEmpty(v) {
			continue
		}
		if f.typ == TypeText && segments {
			v = []any{map[string]any{"type": "text", "text": v}}
		}
		out[f.name] = v
	}
	return out
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return x["link"] == nil && x["text"] == nil
	}
	return false
}
