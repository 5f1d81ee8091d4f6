// Package webhook is the domain of the webhook result table (docs/webhook.md)
// without its I/O: the workflow/activity contract, the row state machine, readiness of a row's
// tasks, the payload pushed per BizType and the task table's RetryCount rule. It opens no
// connection, so the workflows can use it: the Bitable reads and writes (creators, sweep
// batches, payload building) are internal/webhook/bitable, the push to the summary receiver is
// internal/webhook/summary. It holds no Temporal code.
package webhook

// BizType says how a result row is summarised.
const (
	BizPiracyGeneralSearch = "piracy_general_search"
	BizVideoScreenCapture  = "video_screen_capture"
	BizSingleURLCapture    = "single_url_capture"
)

// Result row statuses.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusFailed  = "failed"
	StatusError   = "error"
)

// Task table statuses beyond the shared ones.
const (
	TaskDispatched = "dispatched"
	TaskRunning    = "running"
)

// Scenes of the task table the creators and payloads look at.
const (
	SceneGeneralSearch    = "综合页搜索"
	SceneVideoCapture     = "视频录屏采集"
	SceneSingleURLCapture = "单个链接采集"
)

// MaxPushFailures is how many failed pushes turn a row into `error`.
const MaxPushFailures = 3

// MaxTaskRetries is the task-table RetryCount beyond which a failed task becomes `error`.
const MaxTaskRetries = 3

// KnownBizType reports whether b is one of the three summary strategies.
func KnownBizType(b string) bool {
	return b == BizPiracyGeneralSearch || b == BizVideoScreenCapture || b == BizSingleURLCapture
}

// GroupID is `{App}_{BookID}_{UserID}`, the group key shared with the SingleURL worker.
func GroupID(app, bookID, userID string) string { return app + "_" + bookID + "_" + userID }
