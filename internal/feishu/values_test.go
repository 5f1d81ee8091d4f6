package feishu

import (
	"encoding/json"
	"testing"
)

func TestText(t *testing.T) {
	var segs any
	_ = json.Unmarshal([]byte(`[{"type":"text","text":"12"},{"type":"mention","text":"@bob","token":"ou_1"},{"type":"url","text":"3","link":"http://x"}]`), &segs)
	cases := []struct {
		in   any
		want string
	}{
		{nil, ""}, {"abc", "abc"}, {float64(123), "123"}, {1.5, "1.5"}, {true, "true"},
		{segs, "12@bob3"},
		{[]any{"a", "b"}, "a,b"},
		{map[string]any{"link": "http://x", "text": "site"}, "site"},
		{map[string]any{"type": float64(1), "value": []any{map[string]any{"type": "text", "text": "v"}}}, "v"},
		{[]any{map[string]any{"id": "ou_1", "name": "Ann"}}, "Ann"},
		// Two people are two values, not one run-together name.
		{[]any{map[string]any{"id": "ou_1", "name": "张三"}, map[string]any{"id": "ou_2", "name": "李四"}}, "张三,李四"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNumberAndMillis(t *testing.T) {
	if n, ok := Number([]any{map[string]any{"type": "text", "text": " 42 "}}); !ok || n != 42 {
		t.Fatalf("Number(segments) = %v %v", n, ok)
	}
	if _, ok := Number("abc"); ok {
		t.Fatal("non-numeric text accepted")
	}
	if _, ok := Number("NaN"); ok {
		t.Fatal("NaN accepted")
	}
	if ms, ok := Millis(float64(1765900800000)); !ok || ms != 1765900800000 {
		t.Fatalf("Millis = %v %v", ms, ok)
	}
	if _, ok := Millis(float64(-1)); ok {
		t.Fatal("negative millis accepted")
	}
}

func FuzzFieldValue(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, `"x"`, `12.5`, `null`, `true`,
		`{"link":"http://a","text":"t"}`, `{"type":20,"value":["a",{"text":"b"}]}`, `[["nested"]]`, `["1","2"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		s := Text(v)
		if n, ok := Number(v); ok {
			if n != n {
				t.Fatalf("Number returned NaN for %s", data)
			}
		}
		if ms, ok := Millis(v); ok && ms < 0 {
			t.Fatalf("negative millis for %s", data)
		}
		if _, isStr := v.(string); isStr && s != v.(string) {
			t.Fatalf("plain string changed: %q -> %q", v, s)
		}
	})
}

// PlainValue keeps each shape's meaning (record-structure doc, search response example).
func TestPlainValue(t *testing.T) {
	parse := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct{ in, want string }{
		{`[{"type":"text","text":"见 "},{"type":"mention","mentionType":"User","text":"@张三","token":"ou_1","name":"张三"},{"type":"url","text":"官网","link":"https://x"}]`, `"见 @张三官网"`},
		{`{"link":"https://v.example/1","text":"视频页"}`, `{"link":"https://v.example/1","text":"视频页"}`},
		{`[{"id":"ou_1","name":"张三","en_name":"San","email":"a@b","avatar_url":"u"},{"id":"ou_2","name":"李四"}]`, `["张三","李四"]`},
		{`{"type":1,"value":[{"type":"text","text":"v"}]}`, `"v"`},
		{`["a","b"]`, `["a","b"]`},
		{`1765900800000`, `1765900800000`},
		{`true`, `true`},
		{`"opt"`, `"opt"`},
	}
	for _, c := range cases {
		got, err := json.Marshal(PlainValue(parse(c.in)))
		if err != nil || string(got) != c.want {
			t.Errorf("PlainValue(%s) = %s %v, want %s", c.in, got, err, c.want)
		}
	}
}

func FuzzPlainValue(f *testing.F) {
	for _, s := range []string{`[{"type":"text","text":"a"}]`, `{"link":"l","text":"t"}`, `[{"id":"ou","name":"n"}]`,
		`{"type":19,"value":[1,2]}`, `[[{"type":"x"}]]`, `{"link":{"a":1}}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		if _, err := json.Marshal(PlainValue(v)); err != nil {
			t.Fatalf("PlainValue(%s) is not JSON: %v", data, err)
		}
	})
}
