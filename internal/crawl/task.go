package crawl

import (
	"errors"
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

// Finished reports whether the task reached a final status.
func (t TaskRecord) Finished() bool {
	return t.Status == Completed || t.Status == Failed || t.Status == Terminated
}

// ErrTaskNotFound is the answer for a task id that has no record.
var ErrTaskNotFound = errors.New("crawl task not found")
