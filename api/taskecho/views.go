package taskecho

import (
	"slices"
	"strings"
	"time"

	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/listing"
)

func strOrNil(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func historyView(h []taskecho.PullEntry) []map[string]any {
	out := make([]map[string]any, len(h))
	for i, e := range h {
		out[i] = map[string]any{
			"pulled_at": ts(e.PulledAt), "pulled_by": e.PulledBy, "released_at": tsp(e.ReleasedAt),
			"released_by": strOrNil(e.ReleasedBy), "release_reason": strOrNil(e.Reason), "pushed_at": tsp(e.PushedAt),
			"lease_id": e.LeaseID,
		}
	}
	return out
}

// pullFields are the pull fields every task detail view carries.
func pullFields(t *taskecho.Task, m map[string]any) map[string]any {
	m["source"] = t.Source
	m["created_at"] = ts(t.CreatedAt)
	m["updated_at"] = ts(t.UpdatedAt)
	m["server_modified_at"] = tsp(t.ServerModifiedAt)
	m["pulled_at"] = tsp(t.PulledAt)
	m["pulled_by"] = strOrNil(t.PulledBy)
	m["lease_id"] = strOrNil(t.LeaseID)
	m["lease_expires_at"] = tsp(t.LeaseExpiresAt)
	m["priority"] = priority(t)
	m["expires_at"] = tsp(t.ExpiresAt)
	m["archived_at"] = tsp(t.ArchivedAt)
	m["deleted_at"] = tsp(t.DeletedAt)
	m["queue_id"] = strOrNil(t.QueueID)
	m["blocked_by"] = taskecho.BlockedBy(t, time.Now())
	return m
}

func priority(t *taskecho.Task) any {
	switch v := t.Priority.(type) {
	case int32:
		return int(v)
	case int64:
		return int(v)
	default:
		return v
	}
}

// queueTaskView answers GET …/queues/{queueId}/tasks/{taskId}: lowercase roles, session_id/created_at, logs newest first.
func queueTaskView(t *taskecho.Task) map[string]any {
	msgs := make([]map[string]any, len(t.Messages))
	for i, m := range t.Messages {
		msgs[i] = map[string]any{"role": strings.ToLower(m.Role), "content": m.Content,
			"session_id": strOrNil(m.SessionID), "created_at": ts(m.CreatedAt)}
	}
	slices.SortStableFunc(msgs, func(a, b map[string]any) int {
		return strings.Compare(a["created_at"].(string), b["created_at"].(string))
	})
	logs := make([]map[string]any, len(t.Logs))
	for i, l := range t.Logs {
		logs[len(t.Logs)-1-i] = map[string]any{"content": l.Content, "created_at": ts(l.CreatedAt)}
	}
	return taskDetail(t, "id", msgs, logs)
}

// projectTaskView answers GET …/projects/{projectId}/tasks/{taskId}: TaskEcho returned raw messages (UPPERCASE role, sessionId,
// createdAt) here.
func projectTaskView(t *taskecho.Task) map[string]any {
	msgs := make([]map[string]any, len(t.Messages))
	for i, m := range t.Messages {
		msgs[i] = map[string]any{"role": m.Role, "content": m.Content, "sessionId": strOrNil(m.SessionID), "createdAt": ts(m.CreatedAt)}
	}
	logs := make([]map[string]any, len(t.Logs))
	for i, l := range t.Logs {
		logs[i] = map[string]any{"content": l.Content, "createdAt": ts(l.CreatedAt)}
	}
	return taskDetail(t, "task_id", msgs, logs)
}

// taskDetail is the rest of a task's full view, the same in both: idKey names the task id, msgs
// and logs are already in the view's own shape.
func taskDetail(t *taskecho.Task, idKey string, msgs, logs []map[string]any) map[string]any {
	return pullFields(t, map[string]any{
		idKey: t.TaskID, "name": t.Name, "prompt": t.Prompt, "spec_file": t.SpecFile, "status": t.Status,
		"report": strOrNil(t.Report), "tags": t.Tags, "pull_history": historyView(t.PullHistory),
		"messages": msgs, "logs": logs,
	})
}

// queueTaskItem is an item of GET …/queues/{queueId}/tasks.
func queueTaskItem(t *taskecho.Task) map[string]any {
	return map[string]any{
		"id": t.TaskID, "name": t.Name, "prompt": t.Prompt, "spec_file": t.SpecFile, "status": t.Status,
		"report": strOrNil(t.Report), "tags": t.Tags, "source": t.Source, "updated_at": ts(t.UpdatedAt),
		"created_at": ts(t.CreatedAt), "pulled_at": tsp(t.PulledAt), "deleted_at": tsp(t.DeletedAt), "priority": priority(t),
		"blocked_by": taskecho.BlockedBy(t, time.Now()),
	}
}

// projectTaskItem is an item of GET …/projects/{projectId}/tasks.
func projectTaskItem(t *taskecho.Task) map[string]any {
	return map[string]any{
		"task_id": t.TaskID, "id": t.TaskID, "name": t.Name, "prompt": t.Prompt, "spec_file": t.SpecFile,
		"status": t.Status, "report": strOrNil(t.Report), "tags": t.Tags, "source": t.Source,
		"created_at": ts(t.CreatedAt), "updated_at": ts(t.UpdatedAt), "server_modified_at": tsp(t.ServerModifiedAt),
		"pulled_at": tsp(t.PulledAt), "pulled_by": strOrNil(t.PulledBy), "priority": priority(t),
		"blocked_by": taskecho.BlockedBy(t, time.Now()),
	}
}

// pulledItem is one task of a pull answer (the task's pull fields plus queue and lease).
func pulledItem(t *taskecho.Task) map[string]any {
	return map[string]any{
		"task_id": t.TaskID, "queue_id": strOrNil(t.QueueID), "name": t.Name, "prompt": t.Prompt,
		"spec_file": t.SpecFile, "status": t.Status, "report": strOrNil(t.Report), "tags": t.Tags,
		"priority": priority(t), "expires_at": tsp(t.ExpiresAt), "created_at": ts(t.CreatedAt),
		"server_modified_at": tsp(t.ServerModifiedAt), "pulled_at": tsp(t.PulledAt),
		"lease_id": strOrNil(t.LeaseID), "lease_expires_at": tsp(t.LeaseExpiresAt),
	}
}

func clientInfoView(ci *taskecho.ClientInfo) any {
	if ci == nil {
		return nil
	}
	return map[string]any{"username": strOrNil(ci.Username), "hostname": strOrNil(ci.Hostname), "project_path": strOrNil(ci.ProjectPath)}
}

func gitInfoView(g *taskecho.GitInfo) any {
	if g == nil {
		return nil
	}
	return map[string]any{"repository": strOrNil(g.Repository), "branch": strOrNil(g.Branch)}
}

func projectView(s *listing.Project) map[string]any {
	p := s.Project
	var meta any
	title := p.Name
	if p.Metadata != nil {
		meta = map[string]any{"customTitle": strOrNil(p.Metadata.CustomTitle), "notes": strOrNil(p.Metadata.Notes), "tags": p.Metadata.Tags}
		if p.Metadata.CustomTitle != nil && *p.Metadata.CustomTitle != "" {
			title = *p.Metadata.CustomTitle
		}
	}
	policy := p.ConflictPolicy
	if policy == "" {
		policy = taskecho.ConflictOverwrite
	}
	return map[string]any{
		"id": p.ID.Hex(), "project_id": p.ProjectID, "name": p.Name, "displayTitle": title, "metadata": meta,
		"clientInfo": clientInfoView(p.ClientInfo), "gitInfo": gitInfoView(p.GitInfo), "queue_count": s.QueueCount,
		"task_count": s.Stats.Total, "task_stats": s.Stats, "last_task_at": tsp(p.LastTaskAt),
		"created_at": ts(p.CreatedAt), "updated_at": ts(p.UpdatedAt), "conflict_policy": policy,
	}
}

func queueView(s *listing.Queue) map[string]any {
	q := s.Queue
	return map[string]any{
		"id": q.ID.Hex(), "queue_id": q.QueueID, "name": q.Name, "task_count": s.Stats.Total, "task_stats": s.Stats,
		"last_task_at": tsp(q.LastTaskAt), "created_at": ts(q.CreatedAt), "updated_at": ts(q.UpdatedAt),
		"last_reset_at": tsp(q.LastResetAt), "last_operation": strOrNil(q.LastOperation),
	}
}
