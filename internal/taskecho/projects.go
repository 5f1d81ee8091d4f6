package taskecho

import (
	"context"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/taskloom/taskloom/internal/mongox"
)

// RenameProject sets a project's name (P4 PUT); the next submit overwrites it again, as in
// TaskEcho. conflictPolicy, when non-empty, sets the project's push conflict rule.
func (s *Service) RenameProject(ctx context.Context, actor Actor, projectID, name, conflictPolicy string) (*Project, error) {
	now := s.now()
	set := bson.M{"updated_at": now}
	if name != "" {
		set["name"] = name
	}
	if conflictPolicy != "" {
		set["conflict_policy"] = conflictPolicy
	}
	res, err := s.projects.UpdateOne(ctx, bson.M{"project_id": projectID}, bson.M{"$set": set})
	if err != nil {
		return nil, wrap("update project "+projectID, err)
	}
	if res.MatchedCount == 0 {
		return nil, projectNotFound(projectID)
	}
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "project-update", ProjectID: projectID, Count: 1,
		Details: map[string]any{"name": name, "conflict_policy": conflictPolicy}})
	return s.Project(ctx, projectID)
}

// DeleteProject removes a project with its queues, tasks and metadata (TaskEcho left the
// project-level tasks behind). The audit log keeps the record of what was there.
func (s *Service) DeleteProject(ctx context.Context, actor Actor, projectID string) error {
	if _, err := s.Project(ctx, projectID); err != nil {
		return err
	}
	tasks, err := s.tasks.DeleteMany(ctx, bson.M{"project_id": projectID})
	if err != nil {
		return wrap("delete project tasks", err)
	}
	queues, err := s.queues.DeleteMany(ctx, bson.M{"project_id": projectID})
	if err != nil {
		return wrap("delete project queues", err)
	}
	if _, err := s.projects.DeleteOne(ctx, bson.M{"project_id": projectID}); err != nil {
		return wrap("delete project", err)
	}
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "project-delete", ProjectID: projectID,
		Count: int(tasks.DeletedCount), Details: map[string]any{"queues": queues.DeletedCount}})
	return nil
}

// DeleteQueue hard-deletes a queue and its tasks (Q3 DELETE).
func (s *Service) DeleteQueue(ctx context.Context, actor Actor, projectID, queueID string) error {
	if _, _, err := s.ProjectQueue(ctx, projectID, queueID, map[string]any{"project_id": projectID, "queue_id": queueID}); err != nil {
		return err
	}
	res, err := s.tasks.DeleteMany(ctx, bson.M{"project_id": projectID, "queue_id": queueID})
	if err != nil {
		return wrap("delete queue tasks", err)
	}
	if _, err := s.queues.DeleteOne(ctx, bson.M{"project_id": projectID, "queue_id": queueID}); err != nil {
		return wrap("delete queue", err)
	}
	q := queueID
	s.recordAudit(ctx, AuditEntry{Actor: actor.Name, Action: "queue-delete", ProjectID: projectID, QueueID: &q,
		Count: int(res.DeletedCount)})
	return nil
}

// MetadataUpdate is a validated P5 PUT body; nil fields are left unchanged.
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

// SetMetadata updates a project's metadata (P5 PUT).
func (s *Service) SetMetadata(ctx context.Context, projectID string, u MetadataUpdate) (*Project, error) {
	p, err := s.Project(ctx, projectID)
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
	if _, err := s.projects.UpdateOne(ctx, bson.M{"project_id": projectID}, bson.M{"$set": bson.M{"metadata": m}}); err != nil {
		return nil, wrap("update metadata", err)
	}
	p.Metadata = &m
	return p, nil
}

// DeleteMetadata clears a project's metadata (idempotent).
func (s *Service) DeleteMetadata(ctx context.Context, projectID string) error {
	if _, err := s.Project(ctx, projectID); err != nil {
		return err
	}
	_, err := s.projects.UpdateOne(ctx, bson.M{"project_id": projectID}, bson.M{"$set": bson.M{"metadata": nil}})
	return wrap("delete metadata", err)
}

func blankToNil(p *string) *string {
	if p == nil || strings.TrimSpace(*p) == "" {
		return nil
	}
	v := strings.TrimSpace(*p)
	return &v
}

// PopularTags returns project tags by usage, most used first (P3).
func (s *Service) PopularTags(ctx context.Context, limit int) ([]string, error) {
	// Every tagged project is read to count its tags: a scan of the (small) project registry.
	cur, err := s.projects.Find(mongox.DeliberateScan(ctx), bson.M{"metadata.tags.0": bson.M{"$exists": true}})
	if err != nil {
		return nil, wrap("read project tags", err)
	}
	var ps []Project
	if err := cur.All(ctx, &ps); err != nil {
		return nil, wrap("decode project tags", err)
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
