// Package searchattr is the single list of taskloom's custom Temporal search attributes.
// temporal-dev.sh (which greps the Registered list below) and the test harness both register
// exactly this list, so a workflow never upserts an attribute the server does not know.
package searchattr

import "go.temporal.io/sdk/temporal"

// Keys every workflow may set. Keyword attributes are exact-match in visibility queries.
var (
	Kind   = temporal.NewSearchAttributeKeyKeyword("TaskloomKind")
	Status = temporal.NewSearchAttributeKeyKeyword("TaskloomStatus")
	Key    = temporal.NewSearchAttributeKeyKeyword("TaskloomKey")
	// PipelineName is the pipeline a PipelineWorkflow runs (name of pipeline_schemas).
	PipelineName = temporal.NewSearchAttributeKeyKeyword("PipelineName")
	// BizType and GroupID are a webhook result row's keys (WebhookDeliveryWorkflow).
	BizType = temporal.NewSearchAttributeKeyKeyword("BizType")
	GroupID = temporal.NewSearchAttributeKeyKeyword("GroupID")
	// OriginalTaskID is the crawl task's original_task_id (the crawler's task control message).
	OriginalTaskID = temporal.NewSearchAttributeKeyInt64("OriginalTaskId")
	// Channel is an entry task's intake channel (http|telegram|cli), for stats by channel.
	Channel = temporal.NewSearchAttributeKeyKeyword("TaskloomChannel")
	// Reply is "failed" on an entry task whose Telegram reply was refused or given up, for stats
	// and the console (unset otherwise).
	Reply = temporal.NewSearchAttributeKeyKeyword("TaskloomReply")
)

// Registered lists every custom attribute as `Name=Type`, the form of
// `temporal server start-dev --search-attribute`. Keep one quoted entry per line.
var Registered = []string{
	"TaskloomKind=Keyword",
	"TaskloomStatus=Keyword",
	"TaskloomKey=Keyword",
	"PipelineName=Keyword",
	"BizType=Keyword",
	"GroupID=Keyword",
	"OriginalTaskId=Int",
	"TaskloomChannel=Keyword",
	"TaskloomReply=Keyword",
}

// DevServerArgs returns the start-dev arguments that register every attribute.
func DevServerArgs() []string {
	args := make([]string, 0, 2*len(Registered))
	for _, r := range Registered {
		args = append(args, "--search-attribute", r)
	}
	return args
}
