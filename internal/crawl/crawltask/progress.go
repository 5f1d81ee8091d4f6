package crawltask

import "fmt"

// Progress.Status values, as in the seed's task_progress hash.
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
	// crawl.NamedTaskID) that went to the dead-letter topic. Redeliveries of
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

func (c Coordinates) String() string {
	return fmt.Sprintf("%s:%d:%d", c.Topic, c.Partition, c.Offset)
}

// Completion is reported once per task, by the record that completed it.
type Completion struct {
	OriginalTaskID int64
	Progress       Progress
	CompletedBy    Coordinates
}
