package histories

// Budgets of the recorded paths, in Temporal Cloud actions (actions.Cost.Designed: retries
// aside), each with what it is made of. A change that adds an activity, a timer, an upsert or a
// local-activity batch to a path fails TestActionBudgets (tests/budgets) and the integration test
// that runs the path until its row here is changed, with the reason in Why.
var budgets = map[string]map[string]Budget{
	"crawl": {
		"crawler_exit_nonzero":            {Actions: 6, Why: "start 1, upsert 2, MarkRunning 1, RunCrawler 1, Finish 1"},
		"deadline_missing":                {Actions: 8, Why: "start 1, upsert 2, timer 1, MarkRunning 1, RunCrawler 1, ReadProgress 1, Finish 1", Varies: "the deadline timer fires or not, by how fast the crawler runs"},
		"deadline_total_counts_copies":    {Actions: 7, Why: "start 1, upsert 2 (running at start, failed at the end), timer 1, CrawlMarkRunning 1, CrawlFailProgress 1, CrawlFinish 1", Varies: "the deadline timer fires or not, by how fast the crawler runs"},
		"normal_order_lowercase_status":   {Actions: 7, Why: "start 1, signal 1, upsert 2, CrawlMarkRunning 1, CrawlRunCrawler 1, CrawlFinish 1 (plus a deadline timer when the signal comes after the crawler exits)", Varies: "the deadline timer fires or not, by how fast the crawler runs"},
		"started_by_consumer_redelivered": {Actions: 6, Why: "start 1, upsert 2, timer 1, MarkRunning 1, Finish 1", Varies: "the deadline timer fires or not, by how fast the crawler runs"},
		"started_by_task_init_deadline":   {Actions: 7, Why: "start 1, upsert 2, timer 1, MarkRunning 1, ReadProgress 1, Finish 1", Varies: "the deadline timer fires or not, by how fast the crawler runs"},
		"task_init_last":                  {Actions: 7, Why: "start 1, signal 1, upsert 2, MarkRunning 1, RunCrawler 1, Finish 1"},
		"zero_tweets":                     {Actions: 7, Why: "start 1, signal 1, upsert 2, MarkRunning 1, RunCrawler 1, Finish 1"},
	},
	"entry": {
		"bulk_drop_one_task":                      {Actions: 3, Why: "start 1, upsert 1, EntryBulkBatch 1"},
		"bulk_resume_two_tasks":                   {Actions: 3, Why: "start 1, upsert 1, EntryBulkBatch 1"},
		"http_completed":                          {Actions: 5, Why: "start 1, EntryStartRun 1, child 2, EntryRecordStatus 1: the floor of a task that records itself before and after its pipeline; the straight path upserts no TaskloomStatus, the child's id needs no side effect and its admission reads the schema"},
		"http_suspended_auto_dropped":             {Actions: 16, Why: "start 1, EntryStartRun 1, child 4, timer 2, EntryRecordStatus 4, upsert 4 (retrying, processing, suspended, dropped: off the straight path every status shows)", Varies: "retries the pipeline on a timer before it suspends"},
		"http_suspended_dropped":                  {Actions: 17, Why: "start 1, signal 1, EntryStartRun 1, child 4, timer 2, EntryRecordStatus 4, upsert 4 (retrying, processing, suspended, dropped)", Varies: "retries the pipeline on a timer before it suspends"},
		"http_suspended_resumed":                  {Actions: 21, Why: "start 1, signal 1, EntryStartRun 1, child 6, timer 2, EntryRecordStatus 5, upsert 5 (retrying, processing, suspended, processing, completed)", Varies: "retries the pipeline on a timer before it suspends"},
		"http_suspended_resumed_before_auto_drop": {Actions: 21, Why: "start 1, signal 1, EntryStartRun 1, child 6, timer 2, EntryRecordStatus 5, upsert 5 (retrying, processing, suspended, processing, completed)", Varies: "retries the pipeline on a timer before it suspends"},
		"telegram_completed_reply":                {Actions: 6, Why: "start 1, EntryStartRun 1, child 2, EntryRecordStatus 1, EntrySendReply 1: http_completed's floor plus the reply, whose activity records its own parts"},
		"telegram_reply_failed":                   {Actions: 8, Why: "start 1, EntryStartRun 1, child 2, EntryRecordStatus 1, EntrySendReply 1, EntryRecordReplyFailure 1, upsert 1 (TaskloomReply=failed, which the stats and the failed-replies list query)"},
		"telegram_reply_parts":                    {Actions: 6, Why: "start 1, EntryStartRun 1, child 2, EntryRecordStatus 1, EntrySendReply 1 (every part in the one activity)"},
	},
	"pipeline": {
		"async_poll_keeps_job":           {Actions: 12, Why: "start 1, update 1, local-activity batch 2, upsert 1, timer 3, PipelineSubmitAsync 1, PipelinePollAsync 3", Varies: "polls until the vendor answers"},
		"basic_clean_all_down":           {Actions: 4, Why: "start 1, update 1, local-activity batch 1 (admission, choice, failed step and task), upsert 1 (failed): no processing upsert, no max_execution_time timer (sync steps only)"},
		"basic_clean_success":            {Actions: 5, Why: "start 1, update 1, local-activity batch 1 (admission and the first choice), PipelineCallSync 1 (records the step, finishes the task), upsert 1 (success): the floor of a 1-step task"},
		"breaker_single_candidate_waits": {Actions: 24, Why: "start 1, update 1, local-activity batch 9, upsert 1, timer 8, PipelineCallSync 4", Varies: "waits out the breaker cooldown in timer steps"},
		"collection_video_redriven":      {Actions: 10, Why: "start 1, update 2, local-activity batch 2, upsert 1, timer 2, PipelineInvokeSCF 1, PipelineCallSync 1 (finishes the task)"},
		"collection_video_scf_failed":    {Actions: 10, Why: "start 1, update 2, local-activity batch 2, upsert 1, timer 2, PipelineCallSync 1, PipelineInvokeSCF 1"},
		"collection_video_success":       {Actions: 11, Why: "start 1, update 2, local-activity batch 2, upsert 1, timer 2 (max_execution_time: the pipeline awaits a callback; the callback timeout), PipelineCallSync 2 (the last finishes the task), PipelineInvokeSCF 1"},
		"deadline_ends_async_step":       {Actions: 11, Why: "start 1, update 1, local-activity batch 2, upsert 1, timer 3 (max_execution_time, two polls), PipelineCallSync 1, PipelineSubmitAsync 1, PipelinePollAsync 1", Varies: "polls until max_execution_time ends the step"},
		"model_pose12_success":           {Actions: 9, Why: "start 1, update 1, local-activity batch 2, upsert 1, timer 2 (max_execution_time, poll), PipelineSubmitAsync 1, PipelinePollAsync 1", Varies: "polls until the vendor job is done"},
		"model_pose12_worker_restart":    {Actions: 15, Why: "start 1, update 1, local-activity batch 2, upsert 1, timer 5, PipelineSubmitAsync 1, PipelinePollAsync 4", Varies: "polls until the vendor job is done"},
		"provider_health_marks_down":     {Actions: 2, Why: "start 1, PipelineCheckProviderHealth 1"},
		"three_sync_steps_success":       {Actions: 7, Why: "start 1, update 1, local-activity batch 1, PipelineCallSync 3, upsert 1: the floor of 3 sync steps (each activity also records its step, chooses the next step's providers and, last, finishes the task; no max_execution_time timer)"},
		"redrive_bulk_three_tasks":       {Actions: 5, Why: "start 1, upsert 1, timer 1, PipelineRedriveBatch 2", Varies: "follows the bulk operation in batches on a timer"},
		"scf_callback_explained":         {Actions: 9, Why: "start 1, update 2, local-activity batch 2, upsert 1, timer 2, PipelineInvokeSCF 1"},
		"scf_callback_success":           {Actions: 9, Why: "start 1, update 2, local-activity batch 2, upsert 1, timer 2 (max_execution_time, callback timeout), PipelineInvokeSCF 1"},
	},
	"taskecho": {
		"queue_reset_one_activity":   {Actions: 2, Why: "start 1, TaskEchoRunQueueOp 1 (the batches and the finish of up to 10,000 tasks)"},
		"sweeper_release_and_expire": {Actions: 4, Why: "start 1, TaskEchoReleaseExpiredLeases 1, TaskEchoExpireTasks 1, TaskEchoCheckAlerts 1"},
	},
	"webhook": {
		"creator_invalid_filter":                {Actions: 3, Why: "start 1, WebhookCreateVideoRows 1, WebhookCreateSingleURLRows 1"},
		"creator_video_and_single_url":          {Actions: 3, Why: "start 1, WebhookCreateVideoRows 1, WebhookCreateSingleURLRows 1"},
		"creator_video_rows":                    {Actions: 2, Why: "start 1, WebhookCreateVideoRows 1"},
		"delivery_claimed_failing_receiver":     {Actions: 8, Why: "the run a claimed row goes on alone in after the sweep's failed push: start (continue-as-new) 1, timer 2 (retry backoff), WebhookAttempt 2, WebhookWriteBack 2, upsert 1 (failed → error; failed → failed upserts nothing)", Varies: "attempts until the receiver answers or the readiness window ends"},
		"delivery_claimed_failed_push":          {Actions: 3, Why: "claim start 1, sweep outcome signal 1, upsert 1 (pending → failed, which the console lists); no hold timer (the claim's run timeout holds the row); then continue-as-new into the retry loop"},
		"delivery_claimed_success":              {Actions: 2, Why: "claim start 1 (every search attribute set at start), sweep outcome signal 1; the push, re-read and write-back are the sweep's batched Feishu calls. Floor: the start is the per-row lock that keeps overlapping sweeps from pushing twice, and the signal closes it once the write-back is on the row (a run timeout instead would hold every row ClaimHold and end every delivery TimedOut)"},
		"delivery_claimed_workflow_writes_back": {Actions: 3, Why: "claim start 1, sweep outcome signal 1, WebhookWriteBack 1 (Feishu refused the sweep's batch write-back after the push; the push is not repeated)"},
		"delivery_readiness_deadline":           {Actions: 8, Why: "start 1, upsert 1, timer 2, WebhookAttempt 3, WebhookWriteBack 1", Varies: "attempts until the row is ready or the readiness window ends"},
		"delivery_waits_then_succeeds":          {Actions: 7, Why: "start 1, timer 2, WebhookAttempt 3, WebhookWriteBack 1; each readiness check of a waiting row is a timer and an attempt (2 actions); no upsert (pending → success)", Varies: "attempts until the row is ready"},
		"groups_creates_rows":                   {Actions: 2, Why: "start 1, WebhookCreateGroupRows 1"},
		"recover_reset_one":                     {Actions: 2, Why: "start 1, WebhookRecoverRows 1"},
		"sweep_ensures_waiting_rows":            {Actions: 3, Why: "start 1, WebhookEscalateFailedTasks 1, WebhookSweepRows 1"},
	},
}
