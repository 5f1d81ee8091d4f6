package crawl

import (
	"errors"
	"github.com/taskloom/taskloom/internal/waiting"
	"strings"
	"time"
)

// Task statuses in crawl_tasks: the states of the original task.
const (
	Running   = "Running"
	Completed = "Completed"
	Failed    = "Failed"
	// Terminated: the workflow was ended from outside (terminate, timeout, cancel) while the
	// task ran; failure_reason says by whom and why.
	Terminated = "Terminated"
)

// SearchStatus is the TaskloomStatus search attribute of a task status: lower case (running,
// completed, failed), as every subsystem's statuses are in Temporal visibility. crawl_tasks and
// the API keep the capitalised status. Runs that finished before this rule show the capitalised
// value in visibility.
func SearchStatus(status string) string { return strings.ToLower(status) }

// Sources of a crawl task record.
const (
	// SourceAPI: started through taskloom (HTTP or CLI), which runs the crawler.
	SourceAPI = "api"
	// SourceKafka: started by the consumer that saw the task complete, for a
	// crawler run outside taskloom.
	SourceKafka = "kafka"
)

// Finish is the final state written once per task.
type Finish struct {
	Status              string
	TotalTweets         int64 // -1 when TASK_INIT never arrived
	ProcessedTweets     int64
	DuplicateTweets     int64
	DeadLetteredRecords int64
	MissingTweets       int64
	FailureReason       string
}

// CrawlerRecord is what the crawler run left behind.
type CrawlerRecord struct {
	Command    []string  `bson:"command" json:"command"`
	ExitCode   int       `bson:"exit_code" json:"exit_code"`
	Error      string    `bson:"error,omitempty" json:"error,omitempty"`
	LastLines  []string  `bson:"last_lines" json:"last_lines"`
	Lines      int       `bson:"lines" json:"lines"`
	DurationMS int64     `bson:"duration_ms" json:"duration_ms"`
	FinishedAt time.Time `bson:"finished_at" json:"finished_at"`
}

// TaskRecord is one crawl_tasks document, keyed by original_task_id.
type TaskRecord struct {
	OriginalTaskID  int64  `bson:"_id"`
	Status          string `bson:"status"`
	Source          string `bson:"source"`
	WorkflowID      string `bson:"workflow_id"`
	RunID           string `bson:"run_id"`
	TotalTweets     *int64 `bson:"total_tweets,omitempty"`
	ProcessedTweets int64  `bson:"processed_tweets"`
	DuplicateTweets int64  `bson:"duplicate_tweets,omitempty"`
	// DeadLetteredRecords: dead letters naming the task when it finished.
	DeadLetteredRecords int64          `bson:"dead_lettered_records,omitempty"`
	MissingTweets       *int64         `bson:"missing_tweets,omitempty"`
	FailureReason       string         `bson:"failure_reason,omitempty"`
	Crawler             *CrawlerRecord `bson:"crawler,omitempty"`
	CreatedAt           time.Time      `bson:"created_at"`
	UpdatedAt           time.Time      `bson:"updated_at"`
	FinishedAt          *time.Time     `bson:"finished_at,omitempty"`
}

// TaskView is a crawl task as GET /api/v1/crawl-tasks/{id} answers it (and the CLI prints it).
// Counts come from Redis while the task runs and from crawl_tasks once it finished;
// missing_tweets is set after a deadline.
// duplicate_tweets (copies of a counted tweet, and tweets after completion)
// keeps growing in Redis after the task finished while its hash lives.
type TaskView struct {
	OriginalTaskID  int64  `json:"original_task_id"`
	WorkflowID      string `json:"workflow_id"`
	Status          string `json:"status"`
	Source          string `json:"source"`
	TotalTweets     *int64 `json:"total_tweets"`
	ProcessedTweets int64  `json:"processed_tweets"`
	DuplicateTweets int64  `json:"duplicate_tweets"`
	// DeadLetteredRecords counts distinct records naming the task that went to the dead-letter
	// topic (malformed, or missing a field).
	DeadLetteredRecords int64          `json:"dead_lettered_records"`
	MissingTweets       *int64         `json:"missing_tweets,omitempty"`
	ProgressStatus      string         `json:"progress_status,omitempty"`
	FailureReason       string         `json:"failure_reason,omitempty"`
	Crawler             *CrawlerRecord `json:"crawler,omitempty"`
	CreatedAt           time.Time      `json:"created_at"`
	UpdatedAt           time.Time      `json:"updated_at"`
	FinishedAt          *time.Time     `json:"finished_at,omitempty"`
	// WaitingFor is what a running task waits for: its crawler, or its missing tweets until the
	// completion deadline.
	WaitingFor *waiting.For `json:"waiting_for,omitempty"`
}

// View is the record as the API shows it; a running task's live counts come on top (api/crawl).
func (t TaskRecord) View() TaskView {
	return TaskView{OriginalTaskID: t.OriginalTaskID, WorkflowID: t.WorkflowID, Status: t.Status, Source: t.Source,
		TotalTweets: t.TotalTweets, ProcessedTweets: t.ProcessedTweets, DuplicateTweets: t.DuplicateTweets,
		DeadLetteredRecords: t.DeadLetteredRecords, MissingTweets: t.MissingTweets,
		FailureReason: t.FailureReason, Crawler: t.Crawler, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, FinishedAt: t.FinishedAt}
}

// Finished reports whether the task reached a final status.
func (t TaskRecord) Finished() bool {
	return t.Status == Completed || t.Status == Failed || t.Status == Terminated
}

// ErrTaskNotFound is the answer for a task id that has no record.
var ErrTaskNotFound = errors.New("crawl task not found")
