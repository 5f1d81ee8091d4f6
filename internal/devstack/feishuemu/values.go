package feishuemu

import (
	"maps"
	"net/http"
	"slices"
	"strings"
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
			c, ok := textCell(v)
			if !ok {
				return nil, badReq(1254060, "TextFieldConvFail: "+name)
			}
			out[name] = c
		case TypeUser:
			c, ok := userCell(v)
			if !ok {
				return nil, badReq(1254066, "UserFieldConvFail: "+name)
			}
			out[name] = c
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

// textCell accepts a text cell as Feishu's write format (a plain string) or, so that fixtures
// can hold mentions and links, as an array of segments {"type":"text"|"mention"|"url",
// "text",…}; it is stored as given.
func textCell(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []any:
		for _, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			if typ, _ := m["type"].(string); typ != "text" && typ != "mention" && typ != "url" {
				return nil, false
			}
			if _, ok := m["text"].(string); !ok {
				return nil, false
			}
		}
		return x, true
	}
	return nil, false
}

// userCell accepts the write format of a person cell, [{"id":"ou_…"}] (a name may ride along
// in fixtures), and stores the objects.
func userCell(v any) (any, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]any, 0, len(arr))
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		if id, _ := m["id"].(string); id == "" {
			return nil, false
		}
		out = append(out, maps.Clone(m))
	}
	return out, true
}

// render returns r's cells as Feishu returns them (record-structure doc): text as segment
// arrays when segments is true (search, batch_get) and as plain strings otherwise (list/get
// without text_field_as_array); persons as [{id,name,en_name,email,avatar_url}]; URL cells as
// {link,text}; dates as ms; selects as option names. Empty cells are left out.
func (t *table) render(r *record, names []string, segments bool, users map[string]string) map[string]any {
	out := map[string]any{}
	for _, f := range t.fields {
		if len(names) > 0 && !slices.Contains(names, f.name) {
			continue
		}
		v := r.value(f)
		if isEmpty(v) {
			continue
		}
		switch f.typ {
		case TypeText:
			v = renderText(v, segments)
		case TypeUser:
			v = renderUsers(v, users)
		}
		out[f.name] = v
	}
	return out
}

func renderText(v any, segments bool) any {
	switch x := v.(type) {
	case string:
		if segments {
			return []any{map[string]any{"type": "text", "text": x}}
		}
		return x
	case []any:
		if segments {
			return x
		}
		var b strings.Builder
		for _, e := range x {
			s, _ := e.(map[string]any)["text"].(string)
			b.WriteString(s)
		}
		return b.String()
	}
	return v
}

func renderUsers(v any, users map[string]string) any {
	arr, _ := v.([]any)
	out := make([]any, 0, len(arr))
	for _, e := range arr {
		m, _ := e.(map[string]any)
		id, _ := m["id"].(string)
		name, _ := m["name"].(string)
		if n, ok := users[id]; ok {
			name = n
		}
		out = append(out, map[string]any{"id": id, "name": name, "en_name": name, "email": "", "avatar_url": ""})
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
