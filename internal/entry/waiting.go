package entry

import (
	"fmt"
	"time"

	"github.com/taskloom/taskloom/internal/waiting"
)

// WaitingFor is what a task in st waits for (nil once it is final), from what its status
// already holds: the workflow shows it as its current details at each transition, and the API
// answers it from workflow_runs without another read. since is when the status was entered
// (workflow_runs' updated_at).
func WaitingFor(st *TaskStatus, since time.Time) *waiting.For {
	switch st.Status {
	case StatusPending:
		return waiting.New(waiting.Pipeline, "accepted; the first run of pipeline "+st.WorkflowID+" starts", since, time.Time{})
	case StatusProcessing:
		return waiting.New(waiting.Pipeline, fmt.Sprintf("attempt %d: pipeline %s runs as task %s", st.Attempts,
			st.WorkflowID, st.PipelineTaskID), since, time.Time{})
	case StatusRetrying:
		return waiting.New(waiting.RetryBackoff, fmt.Sprintf("retry %d of %d after: %s", st.Retry.Count, st.Retry.Max,
			st.LastError), since, st.Retry.NextAttemptAt)
	case StatusSuspended:
		if st.SuspendedAt != nil {
			since = *st.SuspendedAt
		}
		detail := fmt.Sprintf("suspended after %d attempts: %s — resume with "+
			"POST /internal/tasks/%s/resume (or drop with …/drop)", st.Attempts, st.SuspendedReason, st.TaskID)
		if st.AutoDropAt != nil {
			return waiting.New(waiting.AutoDrop, detail+"; dropped automatically unless resumed by then", since, *st.AutoDropAt)
		}
		return waiting.New(waiting.Operator, detail, since, time.Time{})
	}
	return nil
}
