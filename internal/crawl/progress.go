package crawl

import (
	"context"
	"strconv"
)

// ProgressCounter applies records to their tasks' progress. Each record is
// checked, counted and checked for completion in one atomic step, so
// consumers on any number of workers count it once:
//   - a tweet counts once per distinct tweet_data.id (a copy at any offset,
//     on any partition, before or after TASK_INIT is a duplicate), and
//     processed_tweets never exceeds total_tweets;
//   - a record at or below the highest offset already applied from its
//     topic-partition is a redelivery and changes nothing;
//   - exactly one record per task completes it (Outcome.Completer), again on
//     its redelivery until MarkSignaled confirms the workflow was told.
//
// ApplyBatch may apply all of a task's records of the batch in one atomic
// step; the outcomes are those of one step per record, in order. A failed
// batch may be applied again whole: what was applied already comes back as
// duplicates. The progress package implements it over Redis.
type ProgressCounter interface {
	ApplyBatch(ctx context.Context, us []Update) ([]Outcome, error)
	// MarkSignaled records that the task's workflow received its completion.
	MarkSignaled(ctx context.Context, taskID int64) error
}

// Result says what one script call did.
type Result string

const (
	ResultInitialized Result = "initialized"
	ResultCounted     Result = "counted"
	// ResultDuplicate: a redelivered record, a copy of a tweet already
	// counted, or a tweet after the task completed. Nothing is counted.
	ResultDuplicate Result = "duplicate"
	// ResultDeadLettered: a dead-lettered record naming the task was
	// counted in DeadLetteredRecords (its redelivery is a duplicate).
	ResultDeadLettered Result = "dead_lettered"
)

// Outcome is the script's answer for one record.
type Outcome struct {
	Result   Result
	Progress Progress
	// Completer is true for exactly one record per task: the one that made
	// it COMPLETED (again on its redelivery until MarkSignaled succeeds).
	Completer bool
}

// Update is one record to apply: a TASK_INIT (Init true), a dead letter
// naming the task (DeadLetter true) or a tweet.
type Update struct {
	TaskID      int64
	Coord       Coordinates
	Init        bool
	DeadLetter  bool
	TotalTweets int64
	// TweetID is tweet_data.id, the identity a tweet is counted by.
	TweetID string
}

// Topics names the two input topics of the crawler's contract.
type Topics struct {
	Control string
	Data    string
}

// WorkflowNotifier tells a task's workflow what the consumers saw. Both
// calls must tolerate repeats (redelivery repeats them), which Temporal's
// workflow ID uniqueness gives. The worker fills it with the crawl
// workflows' client functions.
type WorkflowNotifier interface {
	// TaskAnnounced: a TASK_INIT arrived, so the task exists even when its
	// crawler ran outside taskloom; its workflow should exist (and start its
	// completion deadline) from now on.
	TaskAnnounced(ctx context.Context, originalTaskID int64) error
	// TaskCompleted: this record made the task COMPLETED.
	TaskCompleted(ctx context.Context, c Completion) error
}

// Progress.Status values: the status field of the task_progress hash.
const (
	ProgressInitialized = "INITIALIZED"
	ProgressProcessing  = "PROCESSING"
	ProgressCompleted   = "COMPLETED"
	// ProgressFailed: the task failed at its completion deadline; later
	// tweets are still deduplicated and counted but never complete it.
	ProgressFailed = "FAILED"
)

// Progress is the task_progress hash as read by the script.
type Progress struct {
	TotalTweets int64 // -1 until TASK_INIT arrives
	// ProcessedTweets counts distinct tweet ids, never above TotalTweets.
	ProcessedTweets int64
	// DuplicateTweets counts tweet records not counted: copies of a counted
	// tweet, tweets after completion, and distinct tweets beyond a smaller
	// total announced later. Redeliveries of a record are not in it.
	DuplicateTweets int64
	// DeadLetteredRecords counts distinct records naming the task (see
	// NamedTaskID) that went to the dead-letter topic. Redeliveries of
	// a record are not in it.
	DeadLetteredRecords int64
	Status              string // "" until a TASK_INIT or tweet of the task is counted
}

// Missing is how many announced tweets have not been counted (0 when unknown).
func (p Progress) Missing() int64 {
	if p.TotalTweets < 0 || p.ProcessedTweets >= p.TotalTweets {
		return 0
	}
	return p.TotalTweets - p.ProcessedTweets
}

// Coordinates identify one Kafka record; redelivery repeats them, a crawler
// sending the same tweet twice does not (the tweet id tells those copies).
type Coordinates struct {
	Topic     string
	Partition int32
	Offset    int64
}

// String is "<topic>:<partition>:<offset>" (built without fmt: it is made
// for every record the consumer counts).
func (c Coordinates) String() string {
	return c.Topic + ":" + strconv.FormatInt(int64(c.Partition), 10) + ":" + strconv.FormatInt(c.Offset, 10)
}

// Completion is reported once per task, by the record that completed it.
type Completion struct {
	OriginalTaskID int64
	Progress       Progress
	CompletedBy    Coordinates
}
