// Package pipeline holds the rules and model of the pipeline subsystem (docs/pipelines.md): the
// pipeline schema types and their validation, the input/output mapping language, the SCF callback
// signature, tasks, steps, quotas and provider health. It imports no driver and has no Temporal
// workflow code: workflows/pipeline drives these pieces, the MongoDB store is pipelinedb.
package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// StepType is a step's `type`.
type StepType string

// The three step types: a synchronous vendor call, a vendor job that is polled, and an SCF
// function that reports back with a signed callback.
const (
	StepSyncAPI  StepType = "sync_api"
	StepAsyncAPI StepType = "async_api"
	StepSCF      StepType = "scf"
)

// OnFailure policies of a schema's top-level `on_failure`.
const (
	OnFailureRefundQuota = "refund_quota"
	OnFailureNoRefund    = "no_refund"
)

// DefaultVersion is the pipeline_schemas.version of a definition that names none.
const DefaultVersion = "1.0.0"

// VersionLabel is how messages and execution summaries name a requested version: v, or "latest"
// when none is pinned (the admission then resolves the newest published one).
func VersionLabel(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}

// Definition is one entry of pipeline_schemas as posted by a client:
// {"name": ..., "version": ..., "schema": {...}}.
type Definition struct {
	Name    string `json:"name" bson:"name"`
	Version string `json:"version" bson:"version"`
	Schema  Schema `json:"schema" bson:"schema"`
}

// Schema is a pipeline schema's top-level object.
type Schema struct {
	Steps            []Step `json:"steps" bson:"steps"`
	OnFailure        string `json:"on_failure,omitempty" bson:"on_failure,omitempty"`
	MaxExecutionTime int    `json:"max_execution_time,omitempty" bson:"max_execution_time,omitempty"`
}

// Step is one element of `steps`.
type Step struct {
	Name               string            `json:"name" bson:"name"`
	Type               StepType          `json:"type" bson:"type"`
	ProviderRef        string            `json:"provider_ref,omitempty" bson:"provider_ref,omitempty"`
	ProviderCandidates []string          `json:"provider_candidates,omitempty" bson:"provider_candidates,omitempty"`
	Endpoint           string            `json:"endpoint,omitempty" bson:"endpoint,omitempty"`
	SCFFunction        string            `json:"scf_function,omitempty" bson:"scf_function,omitempty"`
	InputMapping       map[string]any    `json:"input_mapping" bson:"input_mapping"`
	OutputMapping      map[string]string `json:"output_mapping" bson:"output_mapping"`
	TimeoutSeconds     int               `json:"timeout_seconds,omitempty" bson:"timeout_seconds,omitempty"`
	Retry              *Retry            `json:"retry,omitempty" bson:"retry,omitempty"`
	Polling            *Polling          `json:"polling,omitempty" bson:"polling,omitempty"`
	CallbackConfig     *CallbackConfig   `json:"callback_config,omitempty" bson:"callback_config,omitempty"`
}

// Retry is a step's `retry` object.
type Retry struct {
	MaxAttempts  int `json:"max_attempts" bson:"max_attempts"`
	DelaySeconds int `json:"delay_seconds" bson:"delay_seconds"`
}

// Polling is the `polling` object of an async_api step.
type Polling struct {
	StatusEndpoint   string   `json:"status_endpoint" bson:"status_endpoint"`
	IntervalSeconds  int      `json:"interval_seconds" bson:"interval_seconds"`
	MaxAttempts      int      `json:"max_attempts" bson:"max_attempts"`
	CompleteStatuses []string `json:"complete_statuses" bson:"complete_statuses"`
	FailedStatuses   []string `json:"failed_statuses" bson:"failed_statuses"`
}

// CallbackConfig is the `callback_config` of an scf step. The signature secret is never
// taken from the schema (a schema must not choose the secret); it is accepted for compatibility.
type CallbackConfig struct {
	URL             string `json:"url,omitempty" bson:"url,omitempty"`
	SignatureSecret string `json:"signature_secret,omitempty" bson:"signature_secret,omitempty"`
}

// Candidates is the ordered provider list of a step: provider_candidates, or [provider_ref].
func (s Step) Candidates() []string {
	if len(s.ProviderCandidates) > 0 {
		return s.ProviderCandidates
	}
	if s.ProviderRef != "" {
		return []string{s.ProviderRef}
	}
	return nil
}

// Timeout defaults when a step does not set timeout_seconds: every external call is bounded.
const (
	DefaultSyncTimeoutSeconds  = 30
	DefaultAsyncTimeoutSeconds = 600
	DefaultSCFTimeoutSeconds   = 600
)

// EffectiveTimeoutSeconds is timeout_seconds or the default of the step type.
func (s Step) EffectiveTimeoutSeconds() int {
	if s.TimeoutSeconds > 0 {
		return s.TimeoutSeconds
	}
	switch s.Type {
	case StepAsyncAPI:
		return DefaultAsyncTimeoutSeconds
	case StepSCF:
		return DefaultSCFTimeoutSeconds
	default:
		return DefaultSyncTimeoutSeconds
	}
}

// RefundsOnFailure reports whether a failed run returns the quota (the default, unless
// on_failure is no_refund).
func (s Schema) RefundsOnFailure() bool { return s.OnFailure != OnFailureNoRefund }

// ParseDefinition decodes a posted definition strictly: unknown fields and wrongly typed values are
// errors that name the field, so a typo such as "provider_candidate" is not silently ignored.
// It does not validate; call Validate on the result.
func ParseDefinition(data []byte) (*Definition, error) {
	var d Definition
	if err := decodeStrict(data, &d); err != nil {
		var loose struct {
			Schema struct {
				Steps []json.RawMessage `json:"steps"`
			} `json:"schema"`
		}
		return nil, inStep(err, data, &loose, func() []json.RawMessage { return loose.Schema.Steps })
	}
	if d.Version == "" {
		d.Version = DefaultVersion
	}
	return &d, nil
}

// ParseSchema decodes a bare schema object strictly (see ParseDefinition).
func ParseSchema(data []byte) (*Schema, error) {
	var s Schema
	if err := decodeStrict(data, &s); err != nil {
		var loose struct {
			Steps []json.RawMessage `json:"steps"`
		}
		return nil, inStep(err, data, &loose, func() []json.RawMessage { return loose.Steps })
	}
	return &s, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeDecodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &FieldError{StepIndex: -1, Field: "(document)", Message: "trailing data after the JSON object"}
	}
	return nil
}

// inStep re-attributes a strict-decoding error to the step it came from, so that a typo or a
// wrongly typed value inside a step is reported as "step N "name": steps[N].field" like the
// validator's problems. It decodes the document loosely into loose, then each step of it on its
// own; when that does not find the step (the error is outside the steps), err is returned as is.
func inStep(err error, data []byte, loose any, steps func() []json.RawMessage) error {
	if json.Unmarshal(data, loose) != nil {
		return err
	}
	for i, raw := range steps() {
		var st Step
		serr := decodeStrict(raw, &st)
		var fe *FieldError
		if serr == nil || !errors.As(serr, &fe) {
			continue
		}
		fe.StepIndex = i
		var named struct {
			Name any `json:"name"`
		}
		if json.Unmarshal(raw, &named) == nil {
			fe.StepName, _ = named.Name.(string)
		}
		return fe
	}
	return err
}

// describeDecodeError turns encoding/json's errors into a FieldError naming the JSON field.
func describeDecodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return &FieldError{StepIndex: -1, Field: typeErr.Field,
			Message: fmt.Sprintf("must be %s, got JSON %s", jsonKind(typeErr.Type.Kind().String()), typeErr.Value)}
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return &FieldError{StepIndex: -1, Field: "(document)",
			Message: fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.Offset, err)}
	}
	if name, ok := strings.CutPrefix(err.Error(), `json: unknown field "`); ok {
		return &FieldError{StepIndex: -1, Field: strings.TrimSuffix(name, `"`), Message: "unknown field (check its spelling)"}
	}
	return &FieldError{StepIndex: -1, Field: "(document)", Message: err.Error()}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return goKind
}
