package webhook

// Payload is what the summary receiver gets: the drama fields plus the flattened records,
// with the row's keys so the receiver can correlate.
type Payload struct {
	BizType      string           `json:"biz_type"`
	RecordID     string           `json:"record_id"`
	GroupID      string           `json:"group_id,omitempty"`
	ParentTaskID string           `json:"parent_task_id,omitempty"`
	TaskIDs      []string         `json:"task_ids"`
	Date         string           `json:"date,omitempty"`
	Drama        map[string]any   `json:"drama"`
	Records      []map[string]any `json:"records"`
	Task         *TaskSummary     `json:"task,omitempty"`
	Tasks        []TaskSummary    `json:"tasks,omitempty"`
}

// TaskSummary is a task's state as pushed.
type TaskSummary struct {
	TaskID string `json:"task_id"`
	App    string `json:"app,omitempty"`
	Scene  string `json:"scene,omitempty"`
	Status string `json:"status"`
	ItemID string `json:"item_id,omitempty"`
	Params string `json:"params,omitempty"`
	BookID string `json:"book_id,omitempty"`
	UserID string `json:"user_id,omitempty"`
}

// PayloadError is a row whose payload cannot be built from its data (for example a video task
// without ItemID). It counts as a failed attempt rather than an infrastructure error.
type PayloadError struct{ Reason string }

func (e *PayloadError) Error() string { return e.Reason }
