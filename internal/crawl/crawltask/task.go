// Package crawltask is the vocabulary a crawl task's workflow, its activities and the stores
// share: the crawl_tasks statuses and sources, the final state written once, the crawler's
// trace, and the task_progress counts. It opens no connection, so workflows/crawl can import it
// (issue 15 item 5); the stores that read and write these values live in internal/crawl.
package crawltask

import "time"

// Task statuses in crawl_tasks, as the seed names the original task's states.
const (
	Running   = "Running"
	Completed = "Completed"
	Failed    = "Failed"
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
