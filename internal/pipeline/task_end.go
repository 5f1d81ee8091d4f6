package pipeline

import "context"

// A task ends in one place: EndTask records every end (success, failure, refund), whichever
// component runs it. On the straight path the last sync_api step's activity runs it after
// recording the step (the fewest actions: SyncStep.Finish); on every other path the workflow's
// bookkeeping local activity does (PipelineFinishTask).

// FinishTaskRequest is a task's end: its final status and what happens to its quota unit,
// refunded when Refund is set, kept consumed otherwise.
type FinishTaskRequest struct {
	TaskID      string
	UserID      string
	FeatureID   string
	Status      string
	ErrorReason string
	Refund      bool
	// FailedStep is the step that failed the task, recorded with the end (nil on success).
	FailedStep *FinishStepRequest `json:",omitempty"`
}

// RefundRequest returns a failed task's quota unit.
type RefundRequest struct {
	TaskID    string
	UserID    string
	FeatureID string
}

// EndStore is the Mongo writes of a task's end (pipelinedb.Store). Each is guarded by the state
// it expects, so EndTask may run again after a crash and changes nothing twice.
type EndStore interface {
	FinishStep(ctx context.Context, taskID string, index int, status, providerRef string, output map[string]any, errMsg string) error
	FinishTask(ctx context.Context, id, status, reason string) error
	RefundQuota(ctx context.Context, userID, featureID, taskID string) (refunded bool, err error)
	MarkRefunded(ctx context.Context, id string) error
	SettleQuota(ctx context.Context, userID, featureID, taskID string) error
}

// EndMetrics counts the ends (pipelineprom.Metrics).
type EndMetrics interface {
	TaskFinished(status string)
	QuotaRefunded()
}

// EndTask records a task's end: the step that failed it, the task's final status, then its quota
// unit, refunded (end.Refund) or kept consumed. Guards: only an open step or task changes status;
// the unit moves only while the task id is in the quota's open_tasks, so a retry moves nothing
// twice.
func EndTask(ctx context.Context, s EndStore, m EndMetrics, end FinishTaskRequest) error {
	if f := end.FailedStep; f != nil {
		if err := s.FinishStep(ctx, f.TaskID, f.StepIndex, f.Status, f.ProviderRef, f.Output, f.ErrorMessage); err != nil {
			return err
		}
	}
	if err := s.FinishTask(ctx, end.TaskID, end.Status, end.ErrorReason); err != nil {
		return err
	}
	if end.Refund {
		if _, err := RefundUnit(ctx, s, m, RefundRequest{TaskID: end.TaskID, UserID: end.UserID, FeatureID: end.FeatureID}); err != nil {
			return err
		}
	} else if err := s.SettleQuota(ctx, end.UserID, end.FeatureID, end.TaskID); err != nil {
		return err
	}
	m.TaskFinished(end.Status)
	return nil
}

// RefundUnit returns the task's quota unit (EndTask's refund). Guard: the unit comes back only
// while the task id is in the quota's open_tasks, in the same update that removes it, so a retry
// refunds once; the task's `refunded` flag follows. refunded says this call gave the unit back.
func RefundUnit(ctx context.Context, s EndStore, m EndMetrics, req RefundRequest) (refunded bool, err error) {
	did, err := s.RefundQuota(ctx, req.UserID, req.FeatureID, req.TaskID)
	if err != nil {
		return false, err
	}
	if did {
		m.QuotaRefunded()
	}
	if err := s.MarkRefunded(ctx, req.TaskID); err != nil {
		return did, err
	}
	return did, nil
}
