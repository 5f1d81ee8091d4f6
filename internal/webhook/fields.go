package webhook

import "github.com/taskloom/taskloom/internal/config"

// Column names come from config (WEBHOOK_FIELD_*, TASK_FIELD_*, DRAMA_FIELD_*, CAPTURE_FIELD_*).
type (
	WebhookFieldNames = config.WebhookFields
	TaskFieldNames    = config.TaskFields
	DramaFieldNames   = config.DramaFields
	CaptureFieldNames = config.CaptureFields
)

// FieldNames bundles the column names of the four tables.
type FieldNames struct {
	Webhook WebhookFieldNames
	Task    TaskFieldNames
	Drama   DramaFieldNames
	Capture CaptureFieldNames
}

// FieldNamesFrom takes the names from the webhook config section.
func FieldNamesFrom(c config.Webhook) FieldNames {
	return FieldNames{Webhook: c.WebhookFields, Task: c.TaskFields, Drama: c.DramaFields, Capture: c.CaptureFields}
}

// DefaultFieldNames are the column names the tables have unless the WEBHOOK_FIELD_*, TASK_FIELD_*,
// DRAMA_FIELD_* and CAPTURE_FIELD_* variables rename them.
func DefaultFieldNames() FieldNames { return FieldNamesFrom(config.Defaults().Webhook) }
