package taskecho

import (
	"context"
	"time"
)

// SubmitResult is the data of a submit response.
type SubmitResult struct {
	ProjectID    string `json:"project_id"`
	QueueID      string `json:"queue_id"`
	TasksCount   int    `json:"tasks_count"`
	CreatedTasks int    `json:"created_tasks"`
	UpdatedTasks int    `json:"updated_tasks"`
}

// Submit is TaskEcho's push (POST /api/v1/submit): upsert the project and the queue, write every
// task of the payload as a client task, and soft-delete the queue's client tasks the payload
// omits. Server tasks the payload does not name are never touched. A pushed task that was pulled
// has its lease closed as a success. conflictPolicy ("" = the project's, else the default)
// decides whether a push over a server edit the client has not pulled is a 409; a push of a task
// the server deleted is a 410. Both are checked before anything is written.
//
// All task writes of the push go to MongoDB as one bulk write (see applyPush), so a push of N
// tasks costs a constant number of commands and is either applied whole or, when that one
// command fails part-way, completed by the next attempt: every statement is idempotent and
// stamped with the push's id, so a re-read tells which are still to do.
func (s *Intake) Submit(ctx context.Context, actor Actor, in *SubmitInput, conflictPolicy string) (*SubmitResult, error) {
	now := s.now()
	project, err := s.project(ctx, in.ProjectID)
	if err != nil && !IsKind(err, KindNotFound) {
		return nil, err
	}
	existing, err := s.queueTasks(ctx, in.ProjectID, in.QueueID)
	if err != nil {
		return nil, err
	}
	policy := s.policyFor(project, conflictPolicy)
	if err := s.checkPush(in, existing, policy); err != nil {
		return nil, err
	}
	if err := s.upsertProject(ctx, project, in, now); err != nil {
		return nil, err
	}
	created, err := s.upsertQueue(ctx, in, now)
	if err != nil {
		return nil, err
	}
	if err := s.applyPush(ctx, actor, in, existing, policy, now); err != nil {
		return nil, err
	}
	res := &SubmitResult{ProjectID: in.ProjectID, QueueID: in.QueueID, TasksCount: len(in.Tasks)}
	if created {
		res.CreatedTasks = res.TasksCount
	} else {
		res.UpdatedTasks = res.TasksCount
	}
	return res, nil
}

// pushPlan is the task writes of one push attempt and what each write closes or records.
type pushPlan struct {
	writes []PushWrite
	ids    []string         // task id of each write
	before map[string]*Task // the version each update was built from (nil for an insert)
}

// applyPush writes the push's tasks with one bulk write per attempt. Updates are guarded on the
// revision read; inserts race on the unique key. A statement that lost (another writer came
// first) or did not run (the command failed part-way) is found by re-reading the queue — the
// tasks not yet carrying this push's id — and the next attempt writes only those.
func (s *Intake) applyPush(ctx context.Context, actor Actor, in *SubmitInput, existing map[string]*Task, policy string, now time.Time) error {
	pushID := newLeaseID()
	applied, tried := map[string]*Task{}, map[string]*Task{}
	var lastErr error
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		if attempt > 0 {
			var err error
			if existing, err = s.queueTasks(ctx, in.ProjectID, in.QueueID); err != nil {
				return err
			}
			if err := s.checkPush(in, existing, policy); err != nil {
				return err
			}
		}
		plan := s.planPush(actor, in, existing, pushID, applied, tried, now)
		if len(plan.writes) == 0 {
			s.afterPush(ctx, actor, in, applied, now)
			return nil
		}
		for id, t := range plan.before {
			tried[id] = t
		}
		done, err := s.writePush(ctx, plan)
		if err != nil {
			lastErr = err
		}
		for id := range done {
			applied[id] = plan.before[id]
		}
		if err == nil && len(done) == len(plan.ids) {
			s.afterPush(ctx, actor, in, applied, now)
			return nil
		}
	}
	if lastErr != nil {
		return wrap("push queue "+in.QueueID, lastErr)
	}
	return conflict("任务正在被并发修改，请重试", map[string]any{"queue_id": in.QueueID})
}

// writePush runs plan's bulk write and returns the task ids it certainly applied: all of them
// when every statement applied; none otherwise (the caller's re-read decides).
func (s *Intake) writePush(ctx context.Context, plan pushPlan) (map[string]bool, error) {
	complete, err := s.store.WritePush(ctx, plan.writes)
	if err != nil || !complete {
		return nil, err
	}
	done := make(map[string]bool, len(plan.ids))
	for _, id := range plan.ids {
		done[id] = true
	}
	return done, nil
}

// planPush builds the writes still to do for a push: each named task not yet carrying pushID
// (insert when new, else a guarded update) and a guarded soft delete of each live client task
// of the queue the payload omits.
func (s *Intake) planPush(actor Actor, in *SubmitInput, existing map[string]*Task, pushID string, applied, tried map[string]*Task, now time.Time) pushPlan {
	plan := pushPlan{before: map[string]*Task{}}
	named := make(map[string]bool, len(in.Tasks))
	for i := range in.Tasks {
		st := &in.Tasks[i]
		named[st.ID] = true
		t := existing[st.ID]
		if t != nil && t.PushID == pushID {
			if _, ok := applied[st.ID]; !ok {
				applied[st.ID] = tried[st.ID] // written by an attempt whose answer was lost
			}
			continue
		}
		plan.ids = append(plan.ids, st.ID)
		plan.before[st.ID] = t
		if t == nil {
			plan.writes = append(plan.writes, PushWrite{Insert: newPushedTask(in, st, pushID, now)})
			continue
		}
		set := pushSet(t, st, now)
		set["push_id"] = pushID
		if t.LeaseID != nil {
			for k, v := range closeLeaseSet(t, now, actor.Name, ReleaseClient, true, true) {
				set[k] = v
			}
		}
		plan.writes = append(plan.writes, PushWrite{Write: TaskWrite{Task: t, Set: set}})
	}
	for id, t := range existing {
		if named[id] || t.Source != SourceClient || t.DeletedAt != nil || t.PushID == pushID {
			continue
		}
		set := Fields{"deleted_at": now, "deleted_reason": DeletedByOmitted, "updated_at": now, "push_id": pushID}
		plan.ids = append(plan.ids, id)
		plan.writes = append(plan.writes, PushWrite{Write: TaskWrite{Task: t, Set: set}})
	}
	return plan
}

// afterPush records what the applied writes did: executions (status changes by the client) and
// leases the push closed. It runs once, after the last write of the push.
func (s *Intake) afterPush(ctx context.Context, actor Actor, in *SubmitInput, applied map[string]*Task, now time.Time) {
	qid := in.QueueID
	for i := range in.Tasks {
		st := &in.Tasks[i]
		before := applied[st.ID]
		if before == nil {
			continue
		}
		if isExecution(before.Status, st.Status) {
			s.recordExecution(ctx, before, st.Status, in.ProjectName, hostnameOf(in.ClientInfo), actor.Name, now)
		}
		if before.LeaseID != nil {
			s.observeClose(before, now, ReleaseClient, true)
			s.recordAudit(ctx, AuditEntry{At: now, Actor: actor.Name, Action: "push-close", ProjectID: in.ProjectID,
				QueueID: &qid, TaskIDs: []string{st.ID}, Count: 1, Details: map[string]any{"lease_id": deref(before.LeaseID)}})
		}
	}
}

func (s *Intake) policyFor(p *Project, requested string) string {
	switch {
	case requested != "":
		return requested
	case p != nil && p.ConflictPolicy != "":
		return p.ConflictPolicy
	default:
		return s.set.ConflictPolicy
	}
}

func (s *Intake) queueTasks(ctx context.Context, projectID, queueID string) (map[string]*Task, error) {
	list, err := s.store.QueueTasks(ctx, projectID, queueID)
	if err != nil {
		return nil, wrap("read queue tasks", err)
	}
	out := make(map[string]*Task, len(list))
	for _, t := range list {
		out[t.TaskID] = t
	}
	return out, nil
}

// checkPush finds the tasks a push may not overwrite.
func (s *Intake) checkPush(in *SubmitInput, existing map[string]*Task, policy string) error {
	var goneIDs, conflictIDs []string
	for _, st := range in.Tasks {
		t := existing[st.ID]
		switch {
		case t == nil:
		case t.DeletedAt != nil && deref(t.DeletedReason) == DeletedByServer:
			goneIDs = append(goneIDs, st.ID)
		case policy == ConflictReject && ServerEditedSincePull(t):
			conflictIDs = append(conflictIDs, st.ID)
		}
	}
	if len(goneIDs) > 0 {
		return gone("任务已被删除", map[string]any{"task_ids": goneIDs})
	}
	if len(conflictIDs) > 0 {
		return conflict("任务在拉取后已被服务端修改，请重新拉取", map[string]any{"task_ids": conflictIDs})
	}
	return nil
}

// ServerEditedSincePull reports whether a server task holds an edit the pushing client cannot
// have seen: it was modified after its last pull, or never pulled at all.
func ServerEditedSincePull(t *Task) bool {
	if t.Source != SourceServer || t.ServerModifiedAt == nil {
		return false
	}
	if len(t.PullHistory) == 0 {
		return true
	}
	return t.ServerModifiedAt.After(t.PullHistory[len(t.PullHistory)-1].PulledAt)
}

func (s *Intake) upsertProject(ctx context.Context, p *Project, in *SubmitInput, now time.Time) error {
	set := Fields{"name": in.ProjectName, "last_task_at": now, "updated_at": now}
	if in.ClientInfo != nil {
		set["client_info"] = in.ClientInfo
	}
	if in.GitInfo != nil {
		g := GitInfo{}
		if p != nil && p.GitInfo != nil {
			g = *p.GitInfo
		}
		if in.GitInfo.Repository != nil {
			g.Repository = in.GitInfo.Repository
		}
		if in.GitInfo.Branch != nil {
			g.Branch = in.GitInfo.Branch
		}
		set["git_info"] = g
	}
	if err := s.store.UpsertProject(ctx, in.ProjectID, set, Fields{"created_at": now}); err != nil {
		return wrap("upsert project "+in.ProjectID, err)
	}
	return nil
}

func (s *Intake) upsertQueue(ctx context.Context, in *SubmitInput, now time.Time) (bool, error) {
	created, err := s.store.UpsertQueue(ctx, in.ProjectID, in.QueueID,
		Fields{"name": in.QueueName, "meta": in.Meta, "last_task_at": now, "updated_at": now},
		Fields{"created_at": now, "last_reset_at": nil, "last_operation": nil})
	if err != nil {
		return false, wrap("upsert queue "+in.QueueID, err)
	}
	return created, nil
}

// newPushedTask is a task a push creates.
func newPushedTask(in *SubmitInput, st *SubmitTask, pushID string, now time.Time) *Task {
	qid := in.QueueID
	t := &Task{
		Key: TaskKey(in.ProjectID, &qid, st.ID), Rev: 1, ProjectID: in.ProjectID, QueueID: &qid, TaskID: st.ID,
		Name: st.Name, Prompt: st.Prompt, SpecFile: orEmpty(st.SpecFile), Status: st.Status, Report: st.Report,
		Tags: orEmpty(st.Tags), Source: SourceClient, CreatedAt: now, UpdatedAt: now,
		Priority: st.Priority, PriorityRank: st.PriorityRank, ExpiresAt: st.ExpiresAt,
		PullHistory: []PullEntry{}, Messages: orEmpty(st.Messages), Logs: orEmpty(st.Logs), PushID: pushID,
	}
	t.MessageSeq, t.LogSeq = int64(len(t.Messages)), int64(len(t.Logs))
	if st.Status == StatusPending {
		t.PendingSince = &now
	}
	return t
}

// pushSet is TaskEcho's per-task submit semantics.
func pushSet(t *Task, st *SubmitTask, now time.Time) Fields {
	set := Fields{
		"name": st.Name, "prompt": st.Prompt, "spec_file": orEmpty(st.SpecFile), "status": st.Status,
		"report": st.Report, "source": SourceClient, "updated_at": now, "deleted_at": nil, "deleted_reason": nil,
	}
	if st.Tags != nil {
		set["tags"] = st.Tags
	}
	if t.Priority == nil && st.PrioritySet {
		set["priority"], set["priority_rank"] = st.Priority, st.PriorityRank
	}
	if t.ExpiresAt == nil && st.ExpiresAt != nil {
		set["expires_at"] = st.ExpiresAt
	}
	if st.Status == StatusPending && t.Status != StatusPending {
		set["pending_since"] = now
	}
	finished := st.Status == StatusDone || st.Status == StatusError
	if !(finished && t.Status == st.Status) {
		// The push replaces the conversation, and the append counters restart with it.
		set["messages"], set["message_seq"] = orEmpty(st.Messages), len(st.Messages)
		set["logs"], set["log_seq"] = orEmpty(st.Logs), len(st.Logs)
	}
	return set
}

func hostnameOf(ci *ClientInfo) string {
	if ci == nil || ci.Hostname == nil {
		return ""
	}
	return *ci.Hostname
}
