package pipeline

// The contract between workflows/pipeline and activities/pipeline: activity names and their
// request/response types. Both sides import these; neither imports the other.

// Activity names.
const (
	ActStartTask      = "pipeline.StartTask"
	ActChooseProvider = "pipeline.ChooseProviders"
	ActCallSync       = "pipeline.CallSync"
	ActSubmitAsync    = "pipeline.SubmitAsync"
	ActPollAsync      = "pipeline.PollAsync"
	ActInvokeSCF      = "pipeline.InvokeSCF"
	ActFinishStep     = "pipeline.FinishStep"
	ActFinishTask     = "pipeline.FinishTask"
	ActRefundQuota    = "pipeline.RefundQuota"
	ActCheckHealth    = "pipeline.CheckProviderHealth"
)

// Error types of non-retryable activity failures; the workflow decides on them.
const (
	// ErrTypeRender: the step's input cannot be rendered (missing input field, env not allowed).
	// Neither a retry nor another provider can fix it.
	ErrTypeRender = "PipelineRenderError"
	// ErrTypeVendorRejected: the vendor answered 4xx; retrying the same provider is pointless,
	// another provider may still accept.
	ErrTypeVendorRejected = "PipelineVendorRejected"
	// ErrTypeConfig: a provider or function the schema names is not registered (any more).
	ErrTypeConfig = "PipelineConfigError"
)

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
}

// CallResult is a finished sync call: the rendered input and the mapped output.
type CallResult struct {
	ProviderRef string
	Input       map[string]any
	Output      map[string]any
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

// FinishTaskRequest records a task's final status.
type FinishTaskRequest struct {
	TaskID      string
	Status      string
	ErrorReason string
}

// RefundRequest returns a failed task's quota unit.
type RefundRequest struct {
	TaskID    string
	UserID    string
	FeatureID string
}

// HealthReport summarises one health-check run.
type HealthReport struct {
	Checked int
	Changed []string // "ref: old → new"
}

// CallbackSignal carries a verified SCF callback body into the workflow.
type CallbackSignal struct {
	StepIndex    int
	Status       string
	ErrorMessage string
	// Body is the whole decoded callback body; the step's output_mapping reads it
	// (the seed's example maps "$.output.video_url").
	Body map[string]any
}

// SignalStepCallback is the signal name the callback endpoint sends.
const SignalStepCallback = "pipeline-step-callback"
