package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The shape limits every JSON request body is held to. They are checked in one streaming pass
// before the body is decoded, so a hostile body costs a bounded walk and is refused before any
// store or Temporal call: a 10,000-deep object would otherwise reach the decoder's recursion, the
// BSON encoder (MongoDB refuses more than 100 levels) or a workflow's history, and a 600,000
// element array would be decoded and validated element by element.
const (
	// MaxJSONDepth is how deeply objects and arrays may nest (the top-level value is depth 1).
	MaxJSONDepth = 64
	// MaxJSONArrayElements is how many elements one array may hold.
	MaxJSONArrayElements = 10_000
	// MaxJSONObjectKeys is how many keys one object may hold.
	MaxJSONObjectKeys = 1_000
)

// maxPathText bounds the path an error names, so that a deep body cannot make a long error.
const maxPathText = 200

// CheckJSON walks body and refuses, as a VALIDATION_ERROR naming the path, a body that is not
// JSON, nests deeper than MaxJSONDepth, holds an array or object larger than its limit, or repeats
// a key in one object. Keys that differ only in case count as repeats: encoding/json matches
// struct fields case-insensitively and keeps the last, so {"project_id":A,"PROJECT_ID":B} would
// otherwise mean B to one reader and A to another.
func CheckJSON(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers are only counted here; parsing them would be wasted work
	w := walker{}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return w.end()
		}
		if err != nil {
			return syntaxError(err)
		}
		if err := w.step(tok); err != nil {
			return err
		}
		if w.done && dec.More() {
			return Validation("body", "request body holds more than one JSON value")
		}
	}
}

// frame is one open object or array of the walk.
type frame struct {
	object  bool
	count   int               // elements or keys so far
	wantKey bool              // object: the next string token is a key
	key     string            // object: the key whose value is being read
	seen    map[string]string // object: folded key → key as sent
}

type walker struct {
	stack []frame
	done  bool // the top-level value is complete
}

func (w *walker) step(tok json.Token) error {
	if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
		w.stack = w.stack[:len(w.stack)-1]
		w.valueDone()
		return nil
	}
	if n := len(w.stack); n > 0 && w.stack[n-1].object && w.stack[n-1].wantKey {
		return w.key(tok.(string)) // the decoder only yields a string in key position
	}
	if err := w.element(); err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); ok {
		if len(w.stack) >= MaxJSONDepth {
			return Validation(w.path(), fmt.Sprintf("request body nests deeper than %d levels at %s", MaxJSONDepth, w.path())).
				WithDetail("limit", MaxJSONDepth)
		}
		w.stack = append(w.stack, frame{object: d == '{', wantKey: d == '{'})
		return nil
	}
	w.valueDone()
	return nil
}

// element counts one more element of the enclosing array.
func (w *walker) element() error {
	n := len(w.stack)
	if n == 0 || w.stack[n-1].object {
		return nil
	}
	f := &w.stack[n-1]
	if f.count == MaxJSONArrayElements {
		return Validation(w.parentPath(), fmt.Sprintf("array %s holds more than %d elements", w.parentPath(), MaxJSONArrayElements)).
			WithDetail("limit", MaxJSONArrayElements)
	}
	f.count++
	return nil
}

func (w *walker) key(k string) error {
	f := &w.stack[len(w.stack)-1]
	if f.count == MaxJSONObjectKeys {
		return Validation(w.parentPath(), fmt.Sprintf("object %s holds more than %d keys", w.parentPath(), MaxJSONObjectKeys)).
			WithDetail("limit", MaxJSONObjectKeys)
	}
	if f.seen == nil {
		f.seen = map[string]string{}
	}
	folded := strings.ToLower(strings.ToUpper(k))
	f.key, f.wantKey = k, false
	if first, dup := f.seen[folded]; dup {
		msg := fmt.Sprintf("key %q appears twice in one object", k)
		if first != k {
			msg = fmt.Sprintf("key %q repeats %q (keys that differ only in case are refused)", k, first)
		}
		return Validation(w.path(), msg)
	}
	f.seen[folded] = k
	f.count++
	return nil
}

// valueDone records that a value (scalar or closed container) ended.
func (w *walker) valueDone() {
	n := len(w.stack)
	if n == 0 {
		w.done = true
		return
	}
	if w.stack[n-1].object {
		w.stack[n-1].wantKey = true
	}
}

func (w *walker) end() error {
	if !w.done {
		return Validation("body", "request body is empty or ends early; send a JSON value")
	}
	return nil
}

// path is where the walk is: the field names and indexes of the open containers, e.g.
// "input_data.items[3].name"; "body" at the top.
func (w *walker) path() string { return pathOf(w.stack) }

// parentPath names the innermost open container itself.
func (w *walker) parentPath() string { return pathOf(w.stack[:len(w.stack)-1]) }

func pathOf(stack []frame) string {
	var b strings.Builder
	for _, f := range stack {
		b.WriteString(segment(f))
		if b.Len() > maxPathText {
			return strings.ToValidUTF8(strings.TrimPrefix(b.String()[:maxPathText], "."), "") + "…"
		}
	}
	if b.Len() == 0 {
		return "body"
	}
	return strings.TrimPrefix(b.String(), ".")
}

// segment is how a container names its current child.
func segment(f frame) string {
	if f.object {
		if f.wantKey {
			return ""
		}
		return "." + f.key
	}
	return "[" + strconv.Itoa(f.count-1) + "]"
}

func syntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return Validation("body", fmt.Sprintf("request body is not valid JSON (at byte %d)", se.Offset))
	}
	return Validation("body", "request body is not valid JSON: "+err.Error())
}
