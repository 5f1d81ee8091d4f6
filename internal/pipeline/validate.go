package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// Limits that make a schema "sane": every wait is bounded and nothing can pin a worker or a
// workflow history for days.
const (
	MaxNameLen              = 100 // pipeline_schemas.name VARCHAR(100), task_steps.step_name
	MaxVersionLen           = 20  // pipeline_schemas.version VARCHAR(20)
	MaxProviderRefLen       = 50  // provider_health.provider_ref VARCHAR(50)
	MaxSteps                = 50
	MaxStepTimeoutSeconds   = 24 * 3600
	MaxExecutionTimeSeconds = 24 * 3600
	MaxRetryAttempts        = 10
	MaxRetryDelaySeconds    = 300
	MaxPollIntervalSeconds  = 3600
	// MaxPollAttempts keeps a poll loop well inside one workflow history (each poll is a timer and
	// an activity, about eight events).
	MaxPollAttempts = 1000
)

// Lookup tells validation which providers and SCF functions exist. A nil func skips that check.
type Lookup struct {
	ProviderExists func(ref string) bool
	FunctionExists func(name string) bool
}

// ValidateDefinition checks name and version, then the schema.
func ValidateDefinition(d *Definition, lk Lookup) error {
	v := &validator{lk: lk}
	switch {
	case strings.TrimSpace(d.Name) == "":
		v.top("name", "is required")
	case len(d.Name) > MaxNameLen:
		v.top("name", fmt.Sprintf("must be at most %d characters", MaxNameLen))
	case strings.ContainsAny(d.Name, "/ \t\r\n"):
		v.top("name", "must not contain '/' or whitespace (it is part of the URL)")
	}
	switch {
	case d.Version == "":
		v.top("version", "is required")
	case len(d.Version) > MaxVersionLen:
		v.top("version", fmt.Sprintf("must be at most %d characters", MaxVersionLen))
	case strings.ContainsAny(d.Version, "/ \t\r\n"):
		v.top("version", "must not contain '/' or whitespace (it is part of the URL)")
	}
	v.schema(&d.Schema, "schema.")
	return v.result()
}

// Validate checks a schema completely and returns a *ValidationError listing every problem, each
// naming the step (index and name) and the field.
func Validate(s *Schema, lk Lookup) error {
	v := &validator{lk: lk}
	v.schema(s, "")
	return v.result()
}

type validator struct {
	lk       Lookup
	problems []*FieldError
}

func (v *validator) result() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems}
}

func (v *validator) top(field, msg string) {
	v.problems = append(v.problems, &FieldError{StepIndex: -1, Field: field, Message: msg})
}

func (v *validator) step(i int, st *Step, field, msg string) {
	v.problems = append(v.problems, &FieldError{StepIndex: i, StepName: st.Name, Field: field, Message: msg})
}

func (v *validator) schema(s *Schema, prefix string) {
	switch {
	case len(s.Steps) == 0:
		v.top(prefix+"steps", "is required and must contain at least one step")
	case len(s.Steps) > MaxSteps:
		v.top(prefix+"steps", fmt.Sprintf("must have at most %d steps", MaxSteps))
	}
	if s.OnFailure != "" && s.OnFailure != OnFailureRefundQuota && s.OnFailure != OnFailureNoRefund {
		v.top(prefix+"on_failure", fmt.Sprintf("must be %q or %q, got %q", OnFailureRefundQuota, OnFailureNoRefund, s.OnFailure))
	}
	if s.MaxExecutionTime < 0 || s.MaxExecutionTime > MaxExecutionTimeSeconds {
		v.top(prefix+"max_execution_time", fmt.Sprintf("must be between 1 and %d seconds", MaxExecutionTimeSeconds))
	}
	names := map[string]int{}
	for i := range s.Steps {
		st := &s.Steps[i]
		if prev, dup := names[st.Name]; dup && st.Name != "" {
			v.step(i, st, "name", fmt.Sprintf("duplicates the name of step %d (error reasons name steps)", prev))
		}
		names[st.Name] = i
		v.stepFields(i, st)
		if s.MaxExecutionTime > 0 && st.EffectiveTimeoutSeconds() > s.MaxExecutionTime {
			v.step(i, st, "timeout_seconds", fmt.Sprintf("%d exceeds the pipeline's max_execution_time %d",
				st.EffectiveTimeoutSeconds(), s.MaxExecutionTime))
		}
	}
}

func (v *validator) stepFields(i int, st *Step) {
	switch {
	case strings.TrimSpace(st.Name) == "":
		v.step(i, st, "name", "is required")
	case len(st.Name) > MaxNameLen:
		v.step(i, st, "name", fmt.Sprintf("must be at most %d characters", MaxNameLen))
	}
	switch st.Type {
	case StepSyncAPI, StepAsyncAPI:
		v.apiStep(i, st)
	case StepSCF:
		v.scfStep(i, st)
	case "":
		v.step(i, st, "type", "is required (sync_api, async_api or scf)")
	default:
		v.step(i, st, "type", fmt.Sprintf("must be sync_api, async_api or scf, got %q", st.Type))
	}
	if st.Type != StepAsyncAPI && st.Polling != nil {
		v.step(i, st, "polling", "is only allowed on async_api steps")
	}
	if st.Type != StepSCF && st.CallbackConfig != nil {
		v.step(i, st, "callback_config", "is only allowed on scf steps")
	}
	if st.TimeoutSeconds < 0 || st.TimeoutSeconds > MaxStepTimeoutSeconds {
		v.step(i, st, "timeout_seconds", fmt.Sprintf("must be between 1 and %d", MaxStepTimeoutSeconds))
	}
	if st.Retry != nil {
		if st.Retry.MaxAttempts < 1 || st.Retry.MaxAttempts > MaxRetryAttempts {
			v.step(i, st, "retry.max_attempts", fmt.Sprintf("must be between 1 and %d", MaxRetryAttempts))
		}
		if st.Retry.DelaySeconds < 0 || st.Retry.DelaySeconds > MaxRetryDelaySeconds {
			v.step(i, st, "retry.delay_seconds", fmt.Sprintf("must be between 0 and %d", MaxRetryDelaySeconds))
		}
	}
	v.inputMapping(i, st)
	v.outputMapping(i, st)
}

func (v *validator) apiStep(i int, st *Step) {
	if st.SCFFunction != "" {
		v.step(i, st, "scf_function", fmt.Sprintf("is only allowed on scf steps, not %s", st.Type))
	}
	if st.ProviderRef == "" && len(st.ProviderCandidates) == 0 {
		v.step(i, st, "provider_ref", fmt.Sprintf("is required for %s (or give provider_candidates)", st.Type))
	}
	if st.ProviderRef != "" {
		v.providerRef(i, st, "provider_ref", st.ProviderRef)
		if len(st.ProviderCandidates) > 0 && !slices.Contains(st.ProviderCandidates, st.ProviderRef) {
			v.step(i, st, "provider_ref", fmt.Sprintf("%q is not in provider_candidates, so it would never be used", st.ProviderRef))
		}
	}
	seen := map[string]bool{}
	for j, ref := range st.ProviderCandidates {
		field := fmt.Sprintf("provider_candidates[%d]", j)
		if seen[ref] {
			v.step(i, st, field, fmt.Sprintf("%q is listed twice", ref))
		}
		seen[ref] = true
		if ref != st.ProviderRef {
			v.providerRef(i, st, field, ref)
		}
	}
	switch {
	case st.Endpoint == "":
		v.step(i, st, "endpoint", fmt.Sprintf("is required for %s", st.Type))
	case !strings.HasPrefix(st.Endpoint, "/"):
		v.step(i, st, "endpoint", "must be a path starting with '/' (the provider's base_url comes first)")
	}
	if st.Type == StepAsyncAPI {
		v.polling(i, st)
	}
}

func (v *validator) providerRef(i int, st *Step, field, ref string) {
	switch {
	case ref == "":
		v.step(i, st, field, "must not be empty")
	case len(ref) > MaxProviderRefLen:
		v.step(i, st, field, fmt.Sprintf("must be at most %d characters", MaxProviderRefLen))
	case v.lk.ProviderExists != nil && !v.lk.ProviderExists(ref):
		v.step(i, st, field, fmt.Sprintf("unknown provider %q (register it with PUT /api/v1/providers/%s)", ref, ref))
	}
}

func (v *validator) polling(i int, st *Step) {
	p := st.Polling
	if p == nil {
		v.step(i, st, "polling", "is required for async_api")
		return
	}
	switch {
	case p.StatusEndpoint == "":
		v.step(i, st, "polling.status_endpoint", "is required")
	case !strings.HasPrefix(p.StatusEndpoint, "/"):
		v.step(i, st, "polling.status_endpoint", "must be a path starting with '/'")
	}
	if p.IntervalSeconds < 1 || p.IntervalSeconds > MaxPollIntervalSeconds {
		v.step(i, st, "polling.interval_seconds", fmt.Sprintf("must be between 1 and %d", MaxPollIntervalSeconds))
	}
	if p.MaxAttempts < 1 || p.MaxAttempts > MaxPollAttempts {
		v.step(i, st, "polling.max_attempts", fmt.Sprintf("must be between 1 and %d", MaxPollAttempts))
	}
	if len(p.CompleteStatuses) == 0 {
		v.step(i, st, "polling.complete_statuses", "must list at least one status")
	}
	for _, s := range p.FailedStatuses {
		if slices.Contains(p.CompleteStatuses, s) {
			v.step(i, st, "polling.failed_statuses", fmt.Sprintf("%q is also a complete status", s))
		}
	}
	if _, ok := st.OutputMapping["status"]; !ok && st.OutputMapping != nil {
		v.step(i, st, "output_mapping.status", "is required for async_api (polling decides on the mapped status)")
	}
	if strings.Contains(p.StatusEndpoint, "{vendor_task_id}") {
		if _, ok := st.OutputMapping["vendor_task_id"]; !ok && st.OutputMapping != nil {
			v.step(i, st, "output_mapping.vendor_task_id", "is required because polling.status_endpoint uses {vendor_task_id}")
		}
	}
}

func (v *validator) scfStep(i int, st *Step) {
	switch {
	case st.SCFFunction == "":
		v.step(i, st, "scf_function", "is required for scf")
	case v.lk.FunctionExists != nil && !v.lk.FunctionExists(st.SCFFunction):
		v.step(i, st, "scf_function", fmt.Sprintf("unknown function %q (register it with PUT /api/v1/functions/%s)", st.SCFFunction, st.SCFFunction))
	}
	for _, f := range []struct {
		field string
		set   bool
	}{{"provider_ref", st.ProviderRef != ""}, {"provider_candidates", len(st.ProviderCandidates) > 0}, {"endpoint", st.Endpoint != ""}} {
		if f.set {
			v.step(i, st, f.field, "is not used by scf steps (the function is named by scf_function)")
		}
	}
	if cc := st.CallbackConfig; cc != nil {
		if cc.URL != "" {
			if refs, err := TemplateRefs(cc.URL); err != nil {
				v.step(i, st, "callback_config.url", err.Error())
			} else {
				for _, r := range refs {
					if r.Root == RootInputData || r.Root == RootStepOutput {
						v.step(i, st, "callback_config.url", fmt.Sprintf("${%s} is not allowed here", r.Text))
					}
				}
			}
		}
		if _, err := TemplateRefs(cc.SignatureSecret); err != nil {
			v.step(i, st, "callback_config.signature_secret", err.Error())
		}
	}
}

func (v *validator) inputMapping(i int, st *Step) {
	if st.InputMapping == nil {
		v.step(i, st, "input_mapping", "is required (use {} when the step takes no input)")
		return
	}
	for _, key := range sortedKeys(st.InputMapping) {
		field := "input_mapping." + key
		refs, err := TemplateRefs(st.InputMapping[key])
		if err != nil {
			v.step(i, st, field, err.Error())
			continue
		}
		for _, r := range refs {
			switch {
			case r.Root == RootStepOutput && r.Step >= i:
				v.step(i, st, field, fmt.Sprintf("${%s} refers to step %d, but only earlier steps (0..%d) have output", r.Text, r.Step, i-1))
			case r.Root == RootBackendURL:
				v.step(i, st, field, "${backend_url} is only allowed in callback_config.url")
			}
		}
	}
}

func (v *validator) outputMapping(i int, st *Step) {
	if st.OutputMapping == nil {
		v.step(i, st, "output_mapping", "is required")
		return
	}
	for _, key := range sortedKeys(st.OutputMapping) {
		if _, err := CompileOutputPath(st.OutputMapping[key]); err != nil {
			v.step(i, st, "output_mapping."+key, err.Error())
		}
	}
}
