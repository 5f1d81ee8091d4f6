package crawl

import (
	"errors"
	"time"

	"github.com/taskloom/taskloom/internal/crawl/crawltask"
)

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
	DeadLetteredRecords int64                    `bson:"dead_lettered_records,omitempty"`
	MissingTweets       *int64                   `bson:"missing_tweets,omitempty"`
	FailureReason       string                   `bson:"failure_reason,omitempty"`
	Crawler             *crawltask.CrawlerRecord `bson:"crawler,omitempty"`
	CreatedAt           time.Time                `bson:"created_at"`
	UpdatedAt           time.Time                `bson:"updated_at"`
	FinishedAt          *time.Time               `bson:"finished_at,omitempty"`
}

// Finished reports whether the task reached a final status.
func (t TaskRecord) Finished() bool {
	return t.Status == crawltask.Completed || t.Status == crawltask.Failed
}

// ErrTaskNotFound is the answer for a task id that has no record.
var ErrTaskNotFound = errors.New("crawl task not found")
