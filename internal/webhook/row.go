package webhook

// Row is a result-table row as the worker needs it.
type Row struct {
	RecordID     string   `json:"record_id"`
	BizType      string   `json:"biz_type"`
	ParentTaskID string   `json:"parent_task_id,omitempty"`
	GroupID      string   `json:"group_id,omitempty"`
	Status       string   `json:"status"`
	TaskIDs      []string `json:"task_ids"`
	DramaInfo    string   `json:"drama_info,omitempty"`
	UserInfo     string   `json:"user_info,omitempty"`
	Date         string   `json:"date,omitempty"` // YYYY-MM-DD in the table time zone
	HasStartAt   bool     `json:"has_start_at"`
	RetryCount   int      `json:"retry_count"`
	LastError    string   `json:"last_error,omitempty"`
	// EndAt is when the row's last transition was written (Unix ms; 0 when never).
	EndAt int64 `json:"end_at,omitempty"`
	// BadTaskIDs holds the parse error of the TaskIDs cell; such a row cannot become ready.
	BadTaskIDs string `json:"bad_task_ids,omitempty"`
}

// Task is a task-table row.
type Task struct {
	RecordID     string `json:"record_id"`
	TaskID       string `json:"task_id"`
	ParentTaskID string `json:"parent_task_id,omitempty"`
	App          string `json:"app,omitempty"`
	Scene        string `json:"scene,omitempty"`
	Status       string `json:"status"`
	BookID       string `json:"book_id,omitempty"`
	UserID       string `json:"user_id,omitempty"`
	ItemID       string `json:"item_id,omitempty"`
	Params       string `json:"params,omitempty"`
	Datetime     int64  `json:"datetime,omitempty"` // ms
	RetryCount   int    `json:"retry_count"`
}

// GroupID is the task's `{App}_{BookID}_{UserID}`.
func (t Task) GroupID() string { return GroupID(t.App, t.BookID, t.UserID) }

// Summary is the task's state as pushed.
func (t Task) Summary() TaskSummary {
	return TaskSummary{TaskID: t.TaskID, App: t.App, Scene: t.Scene, Status: t.Status, ItemID: t.ItemID,
		Params: t.Params, BookID: t.BookID, UserID: t.UserID}
}
