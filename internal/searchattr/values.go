package searchattr

import (
	"fmt"
	"slices"
	"strings"
)

// Doc documents one search attribute for operators: what it holds on which executions and the
// values it takes. The search-attribute table of docs/operations.md is Markdown(Docs) (`go run
// ./internal/searchattr/gen -w docs/operations.md` writes it); tests hold the values against the code's constants and every recorded
// history.
type Doc struct {
	Name string
	Type string // Keyword or Int
	// Kinds are the TaskloomKind values of the executions that carry it (empty: every execution).
	Kinds []string
	// Values the attribute takes on those executions; empty for a free-form value (Meaning says
	// what it holds).
	Values []string
	// Legacy values that runs started by an earlier version may still carry.
	Legacy  []string
	Meaning string
}

// The TaskloomKind values, one per kind of execution.
const (
	KindPipeline        = "pipeline"
	KindPipelineHealth  = "pipeline-health"
	KindPipelineRedrive = "pipeline-redrive-bulk"
	KindEntry           = "entry"
	KindEntryBulk       = "entry-bulk"
	KindEcho            = "echo"
	KindWebhookDelivery = "webhook-delivery"
	KindWebhookSweep    = "webhook-sweep"
	KindWebhookCreator  = "webhook-creator"
	KindCrawl           = "crawl"
)

// Docs is the one documented value set of every custom attribute. Statuses are lower case
// everywhere; the Legacy values are what crawl runs finished before that rule carry.
var Docs = []Doc{
	{Name: "TaskloomKind", Type: "Keyword", Values: []string{KindPipeline, KindPipelineHealth, KindPipelineRedrive, KindEntry, KindEntryBulk, KindEcho,
		KindWebhookDelivery, KindWebhookSweep, KindWebhookCreator, KindCrawl},
		Meaning: "the subsystem and kind of execution (a webhook row's delivery is `webhook-delivery`, not `webhook`); manual webhook scans and group runs carry none"},
	{Name: "TaskloomStatus", Type: "Keyword", Kinds: []string{KindPipeline}, Values: []string{"pending", "success", "failed"},
		Legacy:  []string{"processing"},
		Meaning: "the pipeline task's end: `pending` from the start until the run ends (running: add `ExecutionStatus='Running'`), then `success` or `failed`; runs started before the pipeline-cost-floor version also upserted `processing`"},
	{Name: "TaskloomStatus", Type: "Keyword", Kinds: []string{KindPipelineRedrive}, Values: []string{"processing", "success"},
		Meaning: "a bulk redrive operation: `processing` while it runs, `success` once every matched task was handled (per-task outcomes in its result)"},
	{Name: "TaskloomStatus", Type: "Keyword", Kinds: []string{KindEntryBulk}, Values: []string{"processing", "completed"},
		Meaning: "a bulk resume or drop of suspended entry tasks: `processing` while it runs, `completed` once every matched task was handled"},
	{Name: "TaskloomStatus", Type: "Keyword", Kinds: []string{KindEntry}, Values: []string{"pending", "processing", "retrying", "completed", "suspended", "dropped", "failed"},
		Meaning: "the entry task's status; `suspended` waits for an operator"},
	{Name: "TaskloomStatus", Type: "Keyword", Kinds: []string{KindWebhookDelivery}, Values: []string{"pending", "success", "failed", "error"},
		Meaning: "the result row's Status column"},
	{Name: "TaskloomStatus", Type: "Keyword", Kinds: []string{KindCrawl}, Values: []string{"running", "completed", "failed"},
		Legacy:  []string{"Running", "Completed", "Failed"},
		Meaning: "the crawl task's status, lower case (`crawl_tasks` and the API say `Running`, `Completed`, `Failed`)"},
	{Name: "TaskloomKey", Type: "Keyword",
		Meaning: "the business key: an entry task's idempotency key, a webhook row's record id, an echo queue operation's `project/queue`, a schedule's id"},
	{Name: "TaskloomChannel", Type: "Keyword", Kinds: []string{KindEntry}, Values: []string{"http", "telegram", "cli"},
		Meaning: "the intake channel"},
	{Name: "TaskloomReply", Type: "Keyword", Kinds: []string{KindEntry}, Values: []string{"failed"},
		Meaning: "set only when Telegram refused the reply or it was given up"},
	{Name: "PipelineName", Type: "Keyword", Kinds: []string{KindPipeline},
		Meaning: "the pipeline's name (`pipeline_schemas.name`)"},
	{Name: "BizType", Type: "Keyword", Kinds: []string{KindWebhookDelivery}, Values: []string{"piracy_general_search", "video_screen_capture", "single_url_capture"},
		Meaning: "the result row's BizType"},
	{Name: "GroupID", Type: "Keyword", Kinds: []string{KindWebhookDelivery},
		Meaning: "the result row's GroupID"},
	{Name: "OriginalTaskId", Type: "Int", Kinds: []string{KindCrawl},
		Meaning: "the crawl task's `original_task_id`"},
}

// Allowed tells whether value is a documented value of attribute name on an execution of kind,
// legacy values included. Free-form attributes allow any value.
func Allowed(name, kind, value string) bool {
	found := false
	for _, d := range Docs {
		if d.Name != name || (len(d.Kinds) > 0 && !slices.Contains(d.Kinds, kind)) {
			continue
		}
		found = true
		if len(d.Values) == 0 || slices.Contains(d.Values, value) || slices.Contains(d.Legacy, value) {
			return true
		}
	}
	// An attribute taskloom does not document (Temporal's own, such as TemporalChangeVersion) is
	// not this table's business; a documented one on an undocumented kind is not allowed.
	return !found && !slices.ContainsFunc(Docs, func(d Doc) bool { return d.Name == name })
}

// Markdown renders docs as the operations page's table.
func Markdown(docs []Doc) string {
	var b strings.Builder
	b.WriteString("| attribute | type | on executions of kind | values | meaning |\n|---|---|---|---|---|\n")
	for _, d := range docs {
		kinds := "every kind"
		if len(d.Kinds) > 0 {
			kinds = code(d.Kinds)
		}
		values := "free-form"
		if len(d.Values) > 0 {
			values = code(d.Values)
		}
		if len(d.Legacy) > 0 {
			values += "; runs finished by an earlier version: " + code(d.Legacy)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", d.Name, d.Type, kinds, values, d.Meaning)
	}
	return b.String()
}

func code(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}

// The lines around the generated table in docs/operations.md.
const (
	TableBegin = "<!-- searchattr -->"
	TableEnd   = "<!-- /searchattr -->"
)

// TableIn returns the text between doc's TableBegin and TableEnd lines.
func TableIn(doc string) (string, error) {
	_, rest, ok := strings.Cut(doc, TableBegin+"\n")
	table, _, ok2 := strings.Cut(rest, TableEnd)
	if !ok || !ok2 {
		return "", fmt.Errorf("no %s … %s lines", TableBegin, TableEnd)
	}
	return table, nil
}

// ReplaceTable puts table between doc's TableBegin and TableEnd lines.
func ReplaceTable(doc, table string) (string, error) {
	old, err := TableIn(doc)
	if err != nil {
		return "", err
	}
	return strings.Replace(doc, TableBegin+"\n"+old+TableEnd, TableBegin+"\n"+table+TableEnd, 1), nil
}
