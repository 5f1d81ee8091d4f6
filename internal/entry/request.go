package entry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of an envelope's fields, so a single request cannot blow up a workflow payload.
const (
	MaxNameLen       = 200
	MaxChatIDLen     = 128
	MaxUserTextLen   = 64 << 10
	MaxHistoryChunks = 200
)

// FieldError is a request problem naming the JSON field (the HTTP layer answers 400 with it).
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Is makes a FieldError an ErrInvalidRequest refusal.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidRequest }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// ApplyRequest is the WorkflowApplyRequest of POST /api/workflows/apply: the envelope's payload fields plus the
// intake options. HistoryChunks is a pointer so that "missing" and "empty" differ.
type ApplyRequest struct {
	WorkflowID      string         `json:"workflowId"`
	WorkflowVersion string         `json:"workflowVersion"`
	UserText        *string        `json:"userText"`
	HistoryChunks   *[]string      `json:"historyChunks"`
	Policy          map[string]any `json:"policy"`
	CoreEnvelope    map[string]any `json:"coreEnvelope"`
	Telemetry       Telemetry      `json:"telemetry"`
	Metadata        map[string]any `json:"metadata"`
	Source          string         `json:"source"`
	Context         Context        `json:"context"`

	IdempotencyKey     string `json:"idempotencyKey"`
	RetryMax           *int   `json:"retryMax"`
	WaitForResult      bool   `json:"waitForResult"`
	WaitTimeoutSeconds *int   `json:"waitTimeoutSeconds"`
}

// ParseApplyRequest decodes and validates a WorkflowApplyRequest body; every problem is a
// *FieldError naming the field.
func ParseApplyRequest(body []byte) (*ApplyRequest, error) {
	if strings.TrimSpace(string(body)) == "" {
		return nil, fieldErr("body", "request body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return nil, fieldErr("body", "request body is not valid UTF-8")
	}
	var r ApplyRequest
	if err := json.Unmarshal(body, &r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fieldErr(te.Field, "must be %s, got %s", kindName(te.Type.Kind().String()), te.Value)
		}
		return nil, fieldErr("body", "request body is not a valid JSON object: %v", err)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

func kindName(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	if strings.HasPrefix(k, "int") || strings.HasPrefix(k, "uint") {
		return "an integer"
	}
	return "a " + k
}

// Validate checks the required fields (workflowId, userText, historyChunks,
// coreEnvelope.metadata.chat_id) and the bounds of the rest.
func (r *ApplyRequest) Validate() error {
	if err := checkName("workflowId", r.WorkflowID, true); err != nil {
		return err
	}
	if err := checkName("workflowVersion", r.WorkflowVersion, false); err != nil {
		return err
	}
	switch {
	case r.UserText == nil || strings.TrimSpace(*r.UserText) == "":
		return fieldErr("userText", "is required")
	case len(*r.UserText) > MaxUserTextLen:
		return fieldErr("userText", "is longer than %d bytes", MaxUserTextLen)
	case r.HistoryChunks == nil:
		return fieldErr("historyChunks", "is required (send [] when there is no history)")
	case len(*r.HistoryChunks) > MaxHistoryChunks:
		return fieldErr("historyChunks", "has more than %d chunks", MaxHistoryChunks)
	}
	md, ok := r.CoreEnvelope["metadata"].(map[string]any)
	if r.CoreEnvelope != nil && r.CoreEnvelope["metadata"] != nil && !ok {
		return fieldErr("coreEnvelope.metadata", "must be an object")
	}
	raw := md["chat_id"]
	chat := idText(raw)
	switch {
	case raw == nil:
		return fieldErr("coreEnvelope.metadata.chat_id", "is required")
	case chat == "":
		return fieldErr("coreEnvelope.metadata.chat_id", "must be a non-empty string or an integer")
	case len(chat) > MaxChatIDLen:
		return fieldErr("coreEnvelope.metadata.chat_id", "is longer than %d characters", MaxChatIDLen)
	}
	if c := r.Telemetry.Channel; c != "" && !knownChannel(c) {
		return fieldErr("telemetry.channel", "must be one of %s", strings.Join(Channels, "|"))
	}
	for _, k := range []struct{ field, v string }{{"idempotencyKey", r.IdempotencyKey}, {"context.idempotencyKey", r.Context.IdempotencyKey}} {
		if k.v != "" {
			if err := CheckKey(k.v); err != nil {
				return fieldErr(k.field, "%v", err)
			}
		}
	}
	if r.RetryMax != nil && *r.RetryMax < 0 {
		return fieldErr("retryMax", "must not be negative")
	}
	if r.WaitTimeoutSeconds != nil && *r.WaitTimeoutSeconds <= 0 {
		return fieldErr("waitTimeoutSeconds", "must be a positive number of seconds")
	}
	return nil
}

func checkName(field, v string, required bool) error {
	switch {
	case v == "" && required:
		return fieldErr(field, "is required")
	case v == "":
		return nil
	case strings.TrimSpace(v) != v:
		return fieldErr(field, "must not start or end with spaces")
	case len(v) > MaxNameLen:
		return fieldErr(field, "is longer than %d characters", MaxNameLen)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return fieldErr(field, "must not contain control characters")
	}
	return nil
}

func knownChannel(c string) bool {
	for _, k := range Channels {
		if c == k {
			return true
		}
	}
	return false
}

// idText renders a chat id (a string, or a JSON number that is an integer) as text; anything
// else is "".
func idText(v any) string {
	switch t := v.(type) {
	case string:
		s := strings.TrimSpace(t)
		if strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return ""
		}
		return s
	case float64:
		if t != math.Trunc(t) || math.Abs(t) > 1<<53 {
			return ""
		}
		return strconv.FormatInt(int64(t), 10)
	case int64:
		return strconv.FormatInt(t, 10)
	case int:
		return strconv.Itoa(t)
	}
	return ""
}

// Defaults an intake fills in when the request leaves them empty.
type Defaults struct {
	Channel  string
	Source   string
	RetryMax int
	Now      time.Time
	// Window is the {ts} bucket of a generated key (ENTRY_IDEMPOTENCY_WINDOW).
	Window time.Duration
	// KeyTS, when set, is the {ts} of a generated key instead of the time bucket (Telegram's
	// update id).
	KeyTS string
	// Owner is who submits the envelope (Context.Owner); whatever the body says is replaced.
	Owner string
}

// Envelope builds the TaskEnvelope of a validated request. The key is idempotencyKey, else
// context.idempotencyKey, else generated by BuildKey.
func (r *ApplyRequest) Envelope(d Defaults) TaskEnvelope {
	channel := r.Telemetry.Channel
	if channel == "" {
		channel = d.Channel
	}
	source := r.Source
	if source == "" {
		source = d.Source
	}
	chat := (&Payload{CoreEnvelope: r.CoreEnvelope}).ChatID()
	key := r.IdempotencyKey
	if key == "" {
		key = r.Context.IdempotencyKey
	}
	if key == "" {
		ts := d.KeyTS
		if ts == "" {
			ts = KeyTimestamp(d.Now, d.Window)
		}
		key = BuildKey(channel, r.WorkflowID, chat, ts)
	}
	retryMax := d.RetryMax
	if r.RetryMax != nil {
		retryMax = *r.RetryMax
	}
	metadata := r.Metadata
	if metadata == nil {
		metadata = map[string]any{}
	}
	if _, ok := metadata["chat_id"]; !ok {
		metadata["chat_id"] = chat
	}
	if _, ok := metadata["source"]; !ok {
		metadata["source"] = source
	}
	ctx := r.Context
	ctx.IdempotencyKey, ctx.Owner = key, d.Owner
	if ctx.RequestID == "" {
		ctx.RequestID = r.Telemetry.RequestID
	}
	if ctx.TraceID == "" {
		ctx.TraceID = ctx.RequestID
	}
	tel := Telemetry{Channel: channel, RequestID: r.Telemetry.RequestID}
	if tel.RequestID == "" {
		tel.RequestID = ctx.RequestID
	}
	return TaskEnvelope{
		TaskID: TaskID(key),
		Type:   TaskType,
		Payload: Payload{WorkflowID: r.WorkflowID, WorkflowVersion: r.WorkflowVersion, UserText: *r.UserText,
			HistoryChunks: *r.HistoryChunks, Policy: r.Policy, CoreEnvelope: r.CoreEnvelope, Telemetry: tel,
			Metadata: metadata, Source: source},
		Context: ctx,
		Retry:   Retry{Max: retryMax},
		Status:  StatusPending,
	}
}
