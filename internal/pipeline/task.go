package pipeline

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"
)

// Task and step statuses.
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusSuccess    = "success"
	StatusFailed     = "failed"
	// StatusTerminated: the execution was ended from outside (terminate, timeout, cancel) before
	// the workflow recorded an end; error_reason says by whom and why.
	StatusTerminated = "terminated"
)

// Task is one pipeline_tasks document.
type Task struct {
	ID                string         `bson:"_id" json:"id"`
	UserID            string         `bson:"user_id" json:"user_id"`
	FeatureID         string         `bson:"feature_id" json:"feature_id"`
	Pipeline          string         `bson:"pipeline" json:"pipeline"`
	Version           string         `bson:"version" json:"version"`
	InputData         map[string]any `bson:"input_data" json:"input_data"`
	Status            string         `bson:"status" json:"status"`
	ErrorReason       string         `bson:"error_reason,omitempty" json:"error_reason"`
	EligibleForRefund bool           `bson:"eligible_for_refund" json:"eligible_for_refund"`
	Refunded          bool           `bson:"refunded" json:"refunded"`
	RefundedAt        *time.Time     `bson:"refunded_at,omitempty" json:"refunded_at,omitempty"`
	WorkflowID        string         `bson:"workflow_id" json:"workflow_id"`
	// RunID is the workflow run that admitted the task; RequestHash fingerprints the request
	// that created it (the Idempotency-Key check).
	RunID       string     `bson:"run_id,omitempty" json:"-"`
	RequestHash string     `bson:"request_hash,omitempty" json:"-"`
	CreatedAt   time.Time  `bson:"created_at" json:"created_at"`
	UpdatedAt   time.Time  `bson:"updated_at" json:"updated_at"`
	StartedAt   *time.Time `bson:"started_at,omitempty" json:"started_at"`
	CompletedAt *time.Time `bson:"completed_at,omitempty" json:"completed_at"`
	// RedriveCount and Redrives record the redrives of a failed task (redrive.go), oldest first.
	RedriveCount int       `bson:"redrive_count,omitempty" json:"redrive_count"`
	Redrives     []Redrive `bson:"redrives,omitempty" json:"redrives,omitempty"`
	// Plan is the admitted schema's steps, recorded with the task instead of one pending
	// task_steps row per step: a step's row is written by the step itself, and PlannedSteps shows
	// the steps not reached yet as pending. Tasks admitted before it have pending rows instead.
	Plan []PlannedStep `bson:"plan,omitempty" json:"-"`
}

// PlannedStep is one step of a task's plan.
type PlannedStep struct {
	Name string   `bson:"name"`
	Type StepType `bson:"type"`
}

// PlanOf is the plan of a schema's steps.
func PlanOf(steps []Step) []PlannedStep {
	plan := make([]PlannedStep, len(steps))
	for i, st := range steps {
		plan[i] = PlannedStep{Name: st.Name, Type: st.Type}
	}
	return plan
}

// PlannedSteps is the task's steps as clients see them: the stored rows, named after the plan,
// with a pending row for every planned step that has none yet (not reached).
func PlannedSteps(t *Task, rows []StepRecord) []StepRecord {
	if t == nil || len(t.Plan) == 0 {
		return rows
	}
	byIndex := make(map[int]StepRecord, len(rows))
	for _, r := range rows {
		byIndex[r.StepIndex] = r
	}
	out := make([]StepRecord, len(t.Plan))
	for i, p := range t.Plan {
		r, ok := byIndex[i]
		if !ok {
			r = StepRecord{ID: t.ID + ":" + strconv.Itoa(i), TaskID: t.ID, StepIndex: i, Status: StatusPending, CreatedAt: t.CreatedAt}
		}
		r.StepName, r.StepType = p.Name, p.Type
		out[i] = r
	}
	return out
}

// WorkflowID is the deterministic Temporal workflow ID of a task.
func WorkflowID(taskID string) string { return "pipeline-" + taskID }

// NewTaskID returns a fresh task id with an ObjectID's shape and order: 12 bytes in hex, the
// first four the creation second (so ids sort by creation time, which the console's newest-first
// list relies on), the rest random. URL- and field-name-safe.
func NewTaskID() string {
	var id [12]byte
	binary.BigEndian.PutUint32(id[:4], uint32(time.Now().Unix()))
	_, _ = rand.Read(id[4:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(id[:])
}

// ValidTaskID reports whether id has the shape NewTaskID and TaskIDForKey produce: 24 hex digits.
func ValidTaskID(id string) bool {
	if len(id) != 24 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}
