package taskecho

import (
	"context"
	"sort"
	"strings"
)

// Admin manages projects, queues and server tasks: what the console and the admin routes of the
// API change by hand.
type Admin struct{ *core }

// RenameProject sets a project's name (PUT /api/v1/projects/{projectId}); the next submit overwrites it again, as in
// TaskEcho. conflictPolicy, when non-empty, sets the project's push conflict rule.
func (s *Admin) RenameProject(ctx context.Context, actor Actor, projectID, name, conflictPolicy string) (*Project, error) {
	now := s.now()
	set := Fields{"updated_at": now}
	if name != "" {
		set["name"] = name
	}
	if conflictPolicy != "" {
		set["conflict_policy"] = conflictPolicy
	}
	matched, err := s.store.UpdateProject(ctx, projectID, set)
	if err != nil {
		return nil, wrap("update project "+projectID, err)
	}
	if !matched {
		return nil, projectNotFound(projectID)
	}
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "project-update", ProjectID: projectID, Count: 1,
		Details: map[string]any{"name": name, "conflict_policy": conflictPolicy}})
	return s.project(ctx, projectID)
}

// DeleteProject removes a project with its queues, tasks and metadata (TaskEcho left the
// project-level tasks behind). The audit log keeps the record of what was there.
func (s *Admin) DeleteProject(ctx context.Context, actor Actor, projectID string) error {
	if _, err := s.project(ctx, projectID); err != nil {
		return err
	}
	tasks, queues, err := s.store.DeleteProject(ctx, projectID)
	if err != nil {
		return err
	}
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "project-delete", ProjectID: projectID,
		Count: tasks, Details: map[string]any{"queues": int64(queues)}})
	return nil
}

// DeleteQueue hard-deletes a queue and its tasks (DELETE /api/v1/projects/{projectId}/queues/{queueId}).
func (s *Admin) DeleteQueue(ctx context.Context, actor Actor, projectID, queueID string) error {
	if _, _, err := s.projectQueue(ctx, projectID, queueID, map[string]any{"project_id": projectID, "queue_id": queueID}); err != nil {
		return err
	}
	n, err := s.store.DeleteQueue(ctx, projectID, queueID)
	if err != nil {
		return err
	}
	q := queueID
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "queue-delete", ProjectID: projectID, QueueID: &q,
		Count: n})
	return nil
}

// MetadataUpdate is a validated PUT /api/v1/projects/{projectId}/metadata body; nil fields are left unchanged.
type MetadataUpdate struct {
	CustomTitle    *string
	CustomTitleSet bool
	Notes          *string
	NotesSet       bool
	Tags           []string
	TagsSet        bool
}

// NormalizeTags trims, lowercases and de-duplicates tags, dropping empty ones.
func NormalizeTags(in []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// SetMetadata updates a project's metadata (PUT /api/v1/projects/{projectId}/metadata).
func (s *Admin) SetMetadata(ctx context.Context, projectID string, u MetadataUpdate) (*Project, error) {
	p, err := s.project(ctx, projectID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	m := Metadata{Tags: []string{}, CreatedAt: now}
	if p.Metadata != nil {
		m = *p.Metadata
	}
	if u.CustomTitleSet {
		m.CustomTitle = blankToNil(u.CustomTitle)
	}
	if u.NotesSet {
		m.Notes = blankToNil(u.Notes)
	}
	if u.TagsSet {
		m.Tags = NormalizeTags(u.Tags)
	}
	m.UpdatedAt = now
	if _, err := s.store.UpdateProject(ctx, projectID, Fields{"metadata": m}); err != nil {
		return nil, wrap("update metadata", err)
	}
	p.Metadata = &m
	return p, nil
}

// DeleteMetadata clears a project's metadata (idempotent).
func (s *Admin) DeleteMetadata(ctx context.Context, projectID string) error {
	if _, err := s.project(ctx, projectID); err != nil {
		return err
	}
	_, err := s.store.UpdateProject(ctx, projectID, Fields{"metadata": nil})
	return wrap("delete metadata", err)
}

func blankToNil(p *string) *string {
	if p == nil || strings.TrimSpace(*p) == "" {
		return nil
	}
	v := strings.TrimSpace(*p)
	return &v
}

// PopularTags returns project tags by usage, most used first (GET /api/v1/projects/tags): over
// every project, or over projectID alone when it is not empty (a project-bound caller sees no
// other tenant's tags).
func (s *Admin) PopularTags(ctx context.Context, limit int, projectID string) ([]string, error) {
	// Every tagged project is read to count its tags: a scan of the (small) project registry.
	ps, err := s.store.TaggedProjects(ctx, projectID)
	if err != nil {
		return nil, wrap("read project tags", err)
	}
	counts := map[string]int{}
	for _, p := range ps {
		if p.Metadata != nil {
			for _, t := range p.Metadata.Tags {
				counts[t]++
			}
		}
	}
	tags := make([]string, 0, len(counts))
	for t := range counts {
		tags = append(tags, t)
	}
	sort.Slice(tags, func(i, j int) bool {
		if counts[tags[i]] != counts[tags[j]] {
			return counts[tags[i]] > counts[tags[j]]
		}
		return tags[i] < tags[j]
	})
	if len(tags) > limit {
		tags = tags[:limit]
	}
	return tags, nil
}
