package pipeline

// The contract between workflows/pipeline and activities/pipeline: the activities'
// request/response types and the error types the workflow decides on.

import "time"

// Error types of non-retryable activity failures; the workflow decides on them.
const (
	// ErrTypeRender: the step's input cannot be rendered (missing input field, env not allowed).
	// Neither a retry nor another provider can fix it.
	ErrTypeRender = "PipelineRenderError"
	// ErrTypeVendorRejected: the vendor answered 4xx; retrying the same provider is pointless,
	// another provider may still accept.
	ErrTypeVendorRejected = "PipelineVendorRejected"
	// ErrTypeConfig: a provider or function the schema names is not registered (any more), or
	// its URL reaches an address the outbound policy refuses.
	ErrTypeConfig = "PipelineConfigError"
)

// The refusals' error types (admission, redrive, callback) are in refusals.go.

// AdmitRequest asks the workflow's first activity to resolve the schema, check the input, record
// the task and its steps and charge one quota unit.
type AdmitRequest struct {
	TaskID      string
	RunID       string
	UserID      string
	FeatureID   string
	Pipeline    string
	Version     string // empty: the latest
	InputData   map[string]any
	RequestHash string
}

// AdmitResult is an admitted task: the schema snapshot it runs, or, when the task id was admitted
// by an earlier run of the workflow (the ID was reused after Temporal's retention), that run's
// task, which this run must leave alone.
type AdmitResult struct {
	Pipeline          string
	Version           string
	Schema            Schema
	EligibleForRefund bool
	Earlier           *Task
}

// ChooseRequest asks which of a step's candidates may be used now.
type ChooseRequest struct {
	TaskID     string
	StepIndex  int
	Candidates []string
}

// ChooseResult lists usable providers in preference order (every `up` one in candidate order,
// then `degraded` ones as a last resort) and, for the error message, the skipped ones.
type ChooseResult struct {
	Usable  []string
	Skipped []string // "ref (status)"
	// WaitUntil, set when no candidate is usable but some are only held by their circuit
	// breaker, is when the earliest of them may be tried again.
	WaitUntil time.Time `json:",omitzero"`
}

// CallRequest is one attempt of a step against one provider (or the step's SCF function).
type CallRequest struct {
	TaskID      string
	UserID      string
	StepIndex   int
	Step        Step
	ProviderRef string
	InputData   map[string]any
	StepOutputs []map[string]any
	// Redrive is the task's redrive_count when the call belongs to a redrive (0: the first run):
	// the vendor's Idempotency-Key differs per redrive, so a vendor that remembers keys does not
	// answer a redriven step with the failed attempt's response.
	Redrive int `json:",omitempty"`
	// Sync is what a sync step's activity does besides its call: the next step's provider choice
	// and, on the last step, the task's finish (syncStep in workflows/pipeline/cost.go).
	Sync *SyncStep `json:",omitempty"`
	// Tried are the providers this step tried before this one (task_steps.providers_tried).
	Tried []string `json:",omitempty"`
}

// CallResult is a finished sync call: the rendered input and the mapped output.
type CallResult struct {
	ProviderRef string
	Input       map[string]any
	Output      map[string]any
	// Next is the choice among the next step's candidates (CallRequest.NextCandidates), read
	// through the worker's health cache when the call returned.
	Next *ChooseResult `json:",omitempty"`
}

// SyncStep is what a sync_api step's activity does besides the call (PipelineCallSync): choose
// the next step's providers, and, for the last step, finish the task.
type SyncStep struct {
	// NextCandidates are the next step's candidates, when it is a sync_api step.
	NextCandidates []string `json:",omitempty"`
	// Finish, set on the pipeline's last step, ends the task (EndTask) once the step is recorded.
	Finish *FinishTaskRequest `json:",omitempty"`
}

// StepResult is a finished sync step as one write records it.
type StepResult struct {
	TaskID      string
	StepIndex   int
	ProviderRef string
	Input       map[string]any
	Output      map[string]any
	StartedAt   time.Time
	// Calls are the vendor calls the step made, kept on its row for the health check.
	Calls []ProviderCall
	// Tried are the providers the step tried before ProviderRef.
	Tried []string
}

// SubmitResult is an accepted async job.
type SubmitResult struct {
	ProviderRef  string
	Input        map[string]any
	VendorTaskID string
	Status       string
	Output       map[string]any
}

// PollRequest asks a vendor for the status of a job.
type PollRequest struct {
	TaskID       string
	StepIndex    int
	ProviderRef  string
	Step         Step
	VendorTaskID string
}

// PollResult is the mapped status response.
type PollResult struct {
	Status string
	Output map[string]any
}

// InvokeResult is an accepted SCF invocation.
type InvokeResult struct {
	Input       map[string]any
	CallbackURL string
}

// FinishStepRequest records a step's final status.
type FinishStepRequest struct {
	TaskID       string
	StepIndex    int
	Status       string
	ProviderRef  string
	Output       map[string]any
	ErrorMessage string
}

// HealthReport summarises one health-check run.
type HealthReport struct {
	Checked int
	Changed []string // "ref: old → new"
}

// CallbackDelivery carries a verified SCF callback body into the workflow (the step-callback
// update's argument).
type CallbackDelivery struct {
	StepIndex    int
	Status       string
	ErrorMessage string
	// Body is the whole decoded callback body; the step's output_mapping reads it
	// (e.g. "$.output.video_url").
	Body map[string]any
}
