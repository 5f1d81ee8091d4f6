// Package searchattr is the single list of taskloom's custom Temporal search attributes.
// temporal-dev.sh (which greps the Registered list below) and the test harness both register
// exactly this list, so a workflow never upserts an attribute the server does not know.
package searchattr

import (
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

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

// Types returns every Registered attribute with its indexed value type, as the operator API's
// AddSearchAttributes takes them.
func Types() (map[string]enumspb.IndexedValueType, error) {
	attrs := make(map[string]enumspb.IndexedValueType, len(Registered))
	for _, r := range Registered {
		name, typ, _ := strings.Cut(r, "=")
		v, ok := enumspb.IndexedValueType_value["INDEXED_VALUE_TYPE_"+strings.ToUpper(typ)]
		if !ok {
			return nil, fmt.Errorf("search attribute %s: unknown type %s", name, typ)
		}
		attrs[name] = enumspb.IndexedValueType(v)
	}
	return attrs, nil
}
