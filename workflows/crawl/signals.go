package crawl

// Signal and query names of CrawlTaskWorkflow.
const (
	// SignalCompleted is sent by the consumer whose record made the task
	// COMPLETED in Redis (with SignalWithStart).
	SignalCompleted = "crawl-completed"
	// QueryState returns State.
	QueryState = "state"
)

// CompletedSignal is SignalCompleted's payload: the counts when the task
// completed and the record that completed it ("topic:partition:offset").
type CompletedSignal struct {
	TotalTweets     int64
	ProcessedTweets int64
	// DuplicateTweets is the copies not counted up to completion.
	DuplicateTweets int64
	// DeadLetteredRecords is the dead letters naming the task up to completion.
	DeadLetteredRecords int64
	CompletedBy         string
}
