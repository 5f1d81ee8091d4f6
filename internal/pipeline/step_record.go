package pipeline

import (
	"time"
)

// CallbackWaiting is the callback_state of an scf step whose function was (being) invoked. It is a
// view for clients; whether a callback is accepted is decided by the workflow's step-callback
// update, not by this field.
const CallbackWaiting = "waiting"

// StepRecord is one task_steps document: the step's name, provider, status, input, output, error
// and times, plus the engine's bookkeeping (step type, vendor task id, callback state, the
// providers tried).
type StepRecord struct {
	ID             string         `bson:"_id" json:"id"`
	TaskID         string         `bson:"task_id" json:"task_id"`
	StepIndex      int            `bson:"step_index" json:"step_index"`
	StepName       string         `bson:"step_name" json:"step_name"`
	StepType       StepType       `bson:"step_type" json:"step_type"`
	ProviderRef    string         `bson:"provider_ref,omitempty" json:"provider_ref"`
	Status         string         `bson:"status" json:"status"`
	Input          map[string]any `bson:"input,omitempty" json:"input"`
	Output         map[string]any `bson:"output,omitempty" json:"output"`
	ErrorMessage   string         `bson:"error_message,omitempty" json:"error_message"`
	StartedAt      *time.Time     `bson:"started_at,omitempty" json:"started_at"`
	CompletedAt    *time.Time     `bson:"completed_at,omitempty" json:"completed_at"`
	CreatedAt      time.Time      `bson:"created_at" json:"created_at"`
	VendorTaskID   string         `bson:"vendor_task_id,omitempty" json:"vendor_task_id,omitempty"`
	CallbackState  string         `bson:"callback_state,omitempty" json:"callback_state,omitempty"`
	InvokedAt      *time.Time     `bson:"invoked_at,omitempty" json:"invoked_at,omitempty"`
	ProvidersTried []string       `bson:"providers_tried,omitempty" json:"providers_tried,omitempty"`
}
