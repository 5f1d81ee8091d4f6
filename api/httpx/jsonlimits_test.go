package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func nested(open, close string, depth int, inner string) []byte {
	return []byte(strings.Repeat(open, depth) + inner + strings.Repeat(close, depth))
}

func array(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"ids":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"x"`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// refusal asserts err is a 400 VALIDATION_ERROR naming field and returns it.
func refusal(t *testing.T, err error, field string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a VALIDATION_ERROR naming %q, got %v", field, err)
	}
	if e.Status != 400 || e.Code != "VALIDATION_ERROR" || e.Details["field"] != field {
		t.Fatalf("want 400 VALIDATION_ERROR naming %q, got %d %s %v", field, e.Status, e.Code, e.Details)
	}
	return e
}

func TestCheckJSONAcceptsBodiesWithinTheLimits(t *testing.T) {
	for _, body := range []string{
		`{}`, `[]`, `"x"`, `3`, `null`,
		`{"a":{"b":[1,2,{"c":null}]},"A2":true}`,
		string(nested(`[`, `]`, MaxJSONDepth, "")),
		string(array(MaxJSONArrayElements)),
	} {
		if err := CheckJSON([]byte(body)); err != nil {
			t.Errorf("%.60s: %v", body, err)
		}
	}
}

// TestCheckJSONRefusesTenThousandLevelsAtTheLimit: the depth is refused where it passes the
// limit, before the rest is read — shown without a clock: an unterminated body 10,000 levels deep
// is refused for its depth, which a checker that read to the end would answer as a syntax error.
func TestCheckJSONRefusesTenThousandLevelsAtTheLimit(t *testing.T) {
	path := strings.TrimSuffix(strings.Repeat("a.", MaxJSONDepth), ".")
	e := refusal(t, CheckJSON(nested(`{"a":`, `}`, 10_000, "1")), path)
	if e.Details["limit"] != MaxJSONDepth {
		t.Errorf("details %v do not give the limit", e.Details)
	}
	refusal(t, CheckJSON([]byte(strings.Repeat(`{"a":`, 10_000))), path)
}

func TestCheckJSONNamesThePathOfTheDeepValue(t *testing.T) {
	body := []byte(`{"input_data":{"list":[0,` + string(nested(`{"k":`, `}`, 70, "1")) + `]}}`)
	var e *Error
	if !errors.As(CheckJSON(body), &e) {
		t.Fatal("a 73-deep body was accepted")
	}
	field, _ := e.Details["field"].(string)
	if !strings.HasPrefix(field, "input_data.list[1].k.k.") || len(field) > maxPathText+len("…") {
		t.Errorf("field %q does not name the deep value within %d bytes", field, maxPathText)
	}
}

func TestCheckJSONRefusesAnArrayOverTheCapNamingIt(t *testing.T) {
	e := refusal(t, CheckJSON(array(600_000)), "ids")
	if !strings.Contains(e.Message, "10000") {
		t.Errorf("message %q does not give the cap", e.Message)
	}
}

func TestCheckJSONRefusesAnObjectWithTooManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"meta":{`)
	for i := 0; i <= MaxJSONObjectKeys; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	b.WriteString(`}}`)
	refusal(t, CheckJSON([]byte(b.String())), "meta")
}

func TestCheckJSONRefusesRepeatedKeys(t *testing.T) {
	for body, field := range map[string]string{
		`{"project_id":"D","tasks":[],"PROJECT_ID":"A"}`: "PROJECT_ID",
		`{"a":1,"a":2}`:             "a",
		`{"x":[{"id":1,"Id":2}]}`:   "x[0].Id",
		`{"k":1,"\u212a":2}`:        "\u212a", // KELVIN SIGN folds to k in encoding/json
		`{"a":{"b":1},"c":{"b":1}}`: "",
	} {
		err := CheckJSON([]byte(body))
		if field == "" {
			if err != nil {
				t.Errorf("%s: the same key in two objects is no repeat: %v", body, err)
			}
			continue
		}
		refusal(t, err, field)
	}
}

func TestCheckJSONRefusesWhatIsNotOneJSONValue(t *testing.T) {
	for _, body := range []string{`{"a":`, `{"a" 1}`, `{} {}`, `[1,]`} {
		refusal(t, CheckJSON([]byte(body)), "body")
	}
}

// FuzzCheckJSON holds CheckJSON to its contract on any input: it never panics, whatever it
// accepts is one JSON value within the limits, and what it refuses that is valid JSON within
// the size limits repeats a key.
func FuzzCheckJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":null}],"c":"d"}`))
	f.Add([]byte(`{"project_id":"a","PROJECT_ID":"b"}`))
	f.Add(nested(`[`, `]`, MaxJSONDepth+1, ""))
	f.Fuzz(func(t *testing.T, body []byte) {
		err := CheckJSON(body)
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		valid := json.Valid(body) && dec.Decode(&v) == nil
		if err == nil {
			if !valid {
				t.Fatalf("accepted invalid JSON %q", body)
			}
			if s := measure(v, 1); s.depth > MaxJSONDepth || s.elements > MaxJSONArrayElements || s.keys > MaxJSONObjectKeys {
				t.Fatalf("accepted %+v beyond the limits", s)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.Status != 400 || e.Details["field"] == "" {
			t.Fatalf("refusal %v is not a 400 naming a field", err)
		}
		if !valid {
			return
		}
		s := measure(v, 1)
		within := s.depth <= MaxJSONDepth && s.elements <= MaxJSONArrayElements && s.keys <= MaxJSONObjectKeys
		if within && !strings.Contains(e.Message, "twice") && !strings.Contains(e.Message, "repeats") {
			t.Fatalf("refused %q within the limits: %v", body, err)
		}
	})
}

// shape is the largest depth, array and object of a decoded value.
type shape struct{ depth, elements, keys int }

func measure(v any, depth int) shape {
	s := shape{depth: depth}
	grow := func(c shape) {
		s.depth, s.elements, s.keys = max(s.depth, c.depth), max(s.elements, c.elements), max(s.keys, c.keys)
	}
	switch x := v.(type) {
	case []any:
		s.elements = len(x)
		for _, e := range x {
			grow(measure(e, depth+1))
		}
	case map[string]any:
		s.keys = len(x)
		for _, e := range x {
			grow(measure(e, depth+1))
		}
	default:
		s.depth = depth - 1 // a scalar opens no level
	}
	return s
}
