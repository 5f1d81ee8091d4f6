package echo

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// SubmitResult is the data of a submit response.
type SubmitResult struct {
	ProjectID    string `json:"project_id"`
	QueueID      string `json:"queue_id"`
	TasksCount   int    `json:"tasks_count"`
	CreatedTasks int    `json:"created_tasks"`
	UpdatedTasks int    `json:"updated_tasks"`
}

// Submit is TaskEcho's push (POST /api/v1/submit): upsert the project and the queue, upsert every
// task of the payload as a client task, and soft-delete the queue's client tasks the payload
// omits. Server tasks the payload does not name are never touched. A pushed task that was pulled
// has its lease closed as a success. conflictPolicy ("" = the project's, else the default)
// decides whether a push over a server edit the client has not pulled is a 409; a push of a task
// the server deleted is a 410. Both are checked before anything is written.
func (s *Service) Submit(ctx context.Context, actor Actor, in *SubmitInput, conflictPolicy string) (*SubmitResult, error) {
	now := s.now()
	project, err := s.Project(ctx, in.ProjectID)
	if err != nil && !IsKind(err, KindNotFound) {
		return nil, err
	}
	existing, err := s.queueTasks(ctx, in.ProjectID, in.QueueID)
	if err != nil {
		return nil, err
	}
	if err := s.checkPush(in, existing, s.policyFor(project, conflictPolicy)); err != nil {
		return nil, err
	}
	if err := s.upsertProject(ctx, project, in, now); err != nil {
		return nil, err
	}
	created, err := s.upsertQueue(ctx, in, now)
	if err != nil {
		return nil, err
	}
	for i := range in.Tasks {
		if err := s.pushTask(ctx, actor, in, &in.Tasks[i], now); err != nil {
			return nil, err
		}
	}
	if err := s.dropOmitted(ctx, in, existing, now); err != nil {
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

func (s *Service) policyFor(p *Project, requested string) string {
	switch {
	case requested != "":
		return requested
	case p != nil && p.ConflictPolicy != "":
		return p.ConflictPolicy
	default:
		return s.set.ConflictPolicy
	}
}

func (s *Service) queueTasks(ctx context.Context, projectID, queueID string) (map[string]*Task, error) {
	cur, err := s.tasks.Find(ctx, bson.M{"project_id": projectID, "queue_id": queueID})
	if err != nil {
		return nil, wrap("read queue tasks", err)
	}
	var list []*Task
	if err := cur.All(ctx, &list); err != nil {
		return nil, wrap("decode queue tasks", err)
	}
	out := make(map[string]*Task, len(list))
	for _, t := range list {
		out[t.TaskID] = t
	}
	return out, nil
}

// checkPush finds the tasks a push may not overwrite.
func (s *Service) checkPush(in *SubmitInput, existing map[string]*Task, policy string) error {
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

func (s *Service) upsertProject(ctx context.Context, p *Project, in *SubmitInput, now time.Time) error {
	set := bson.M{"name": in.ProjectName, "last_task_at": now, "updated_at": now}
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
	upd := bson.M{"$set": set, "$setOnInsert": bson.M{"created_at": now}}
	if _, err := s.projects.UpdateOne(ctx, bson.M{"project_id": in.ProjectID}, upd, options.UpdateOne().SetUpsert(true)); err != nil {
		return wrap("upsert project "+in.ProjectID, err)
	}
	return nil
}

func (s *Service) upsertQueue(ctx context.Context, in *SubmitInput, now time.Time) (bool, error) {
	upd := bson.M{
		"$set":         bson.M{"name": in.QueueName, "meta": in.Meta, "last_task_at": now, "updated_at": now},
		"$setOnInsert": bson.M{"created_at": now, "last_reset_at": nil, "last_operation": nil},
	}
	res, err := s.queues.UpdateOne(ctx, bson.M{"project_id": in.ProjectID, "queue_id": in.QueueID}, upd,
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return false, wrap("upsert queue "+in.QueueID, err)
	}
	return res.UpsertedCount > 0, nil
}

// pushTask writes one submitted task: insert when new, else a guarded update that keeps
// created_at, the pull marks and history, and closes an open lease as a success.
func (s *Service) pushTask(ctx context.Context, actor Actor, in *SubmitInput, st *SubmitTask, now time.Time) error {
	qid := in.QueueID
	ref := TaskRef{ProjectID: in.ProjectID, QueueID: &qid, TaskID: st.ID}
	for range maxWriteAttempts {
		t, err := s.findTask(ctx, ref, true)
		if IsKind(err, KindNotFound) {
			err = s.insertPushed(ctx, in, st, now)
			if mongo.IsDuplicateKeyError(err) {
				continue // a concurrent submit inserted it first: update it instead
			}
			return err
		}
		if err != nil {
			return err
		}
		var closed, before *Task
		_, err = s.writeTask(ctx, "push", func(context.Context) (*Task, error) { return t, nil },
			func(t *Task) (bson.M, error) {
				before = t
				set := pushSet(t, st, now)
				if t.LeaseID != nil {
					closed = t
					for k, v := range closeLeaseSet(t, now, actor.Name, ReleaseClient, true, true) {
						set[k] = v
					}
				}
				return bson.M{"$set": set}, nil
			})
		if IsKind(err, KindConflict) {
			continue // lost the ledger race repeatedly on a stale read: re-read and retry
		}
		if err == nil && isExecution(before.Status, st.Status) {
			s.recordExecution(ctx, before, st.Status, in.ProjectName, hostnameOf(in.ClientInfo), actor.Name, now)
		}
		if err == nil && closed != nil {
			s.observeClose(closed, now, ReleaseClient, true)
			s.recordAudit(ctx, AuditEntry{At: now, Actor: actor.Name, Action: "push-close", ProjectID: in.ProjectID,
				QueueID: &qid, TaskIDs: []string{st.ID}, Count: 1, Details: map[string]any{"lease_id": deref(closed.LeaseID)}})
		}
		return err
	}
	return conflict("任务正在被并发修改，请重试", map[string]any{"task_id": st.ID})
}

func (s *Service) insertPushed(ctx context.Context, in *SubmitInput, st *SubmitTask, now time.Time) error {
	qid := in.QueueID
	t := &Task{
		Key: TaskKey(in.ProjectID, &qid, st.ID), ProjectID: in.ProjectID, QueueID: &qid, TaskID: st.ID,
		Name: st.Name, Prompt: st.Prompt, SpecFile: orEmpty(st.SpecFile), Status: st.Status, Report: st.Report,
		Tags: orEmpty(st.Tags), Source: SourceClient, CreatedAt: now, UpdatedAt: now,
		Priority: st.Priority, PriorityRank: st.PriorityRank, ExpiresAt: st.ExpiresAt,
		PullHistory: []PullEntry{}, Messages: orEmpty(st.Messages), Logs: orEmpty(st.Logs),
	}
	if st.Status == StatusPending {
		t.PendingSince = &now
	}
	_, err := s.tasks.InsertOne(ctx, t)
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return wrap("insert pushed task "+st.ID, err)
	}
	return err
}

// pushSet is TaskEcho's per-task submit semantics.
func pushSet(t *Task, st *SubmitTask, now time.Time) bson.M {
	set := bson.M{
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
		set["messages"] = orEmpty(st.Messages)
		set["logs"] = orEmpty(st.Logs)
	}
	return set
}

// dropOmitted soft-deletes the queue's live client tasks the payload does not name.
func (s *Service) dropOmitted(ctx context.Context, in *SubmitInput, existing map[string]*Task, now time.Time) error {
	named := make(map[string]bool, len(in.Tasks))
	for _, t := range in.Tasks {
		named[t.ID] = true
	}
	var drop []*Task
	for id, t := range existing {
		if !named[id] && t.Source == SourceClient && t.DeletedAt == nil {
			drop = append(drop, t)
		}
	}
	won, err := s.claimMany(ctx, drop, "submit-omit")
	if err != nil || len(won) == 0 {
		return err
	}
	upd := bson.M{"$set": bson.M{"deleted_at": now, "deleted_reason": DeletedByOmitted, "updated_at": now}}
	return s.bulkSame(ctx, "soft-delete omitted tasks", won, upd)
}

func hostnameOf(ci *ClientInfo) string {
	if ci == nil || ci.Hostname == nil {
		return ""
	}
	return *ci.Hostname
}
