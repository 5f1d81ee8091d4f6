// Package migrate brings data written by TaskEcho (or by an older taskloom) to the echo model
// that internal/taskecho serves; `starter migrate` runs it. It writes the echo collections directly,
// document by document, and is safe to run any number of times.
package migrate

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/taskecho/taskechodb"
)

// Report counts what Run changed; a second run reports zeros.
type Report struct {
	ProjectsConverted int64 `json:"projects_converted"`
	QueuesConverted   int64 `json:"queues_converted"`
	TasksImported     int64 `json:"tasks_imported"`
	SourceBackfilled  int64 `json:"source_backfilled"`
	PulledAtAdded     int64 `json:"pulled_at_added"`
	FieldsBackfilled  int64 `json:"fields_backfilled"`
}

// Run brings data written by TaskEcho (or by an older taskloom) in db to the current model,
// idempotently, and then creates the echo indexes:
//   - TaskEcho projects (camelCase projectId, clientInfo, gitInfo, lastTaskAt) get project_id etc.;
//   - TaskEcho queues keep their tasks embedded: each is copied into the tasks collection (its
//     unique key makes a re-run skip it) and the array is removed only after every copy landed;
//   - every task without source becomes source=client and without pulled_at gets pulled_at=null
//     (the compatibility rule: TaskEcho's tasks were the client's); the other pull fields get their empty values.
//
// step, when not nil, is told after each of its phases how many of them are done (the CLI's
// progress line).
func Run(ctx context.Context, db *mongo.Database, step func(done, total int)) (*Report, error) {
	s := &migration{projects: db.Collection(taskechodb.CollProjects), queues: db.Collection(taskechodb.CollQueues),
		tasks: db.Collection(taskechodb.CollTasks)}
	r := &Report{}
	var projectIDs map[bson.ObjectID]string
	phases := []func() error{
		func() (err error) { projectIDs, err = s.migrateProjects(ctx, r); return err },
		func() error { return s.migrateQueues(ctx, projectIDs, r) },
		func() error { return s.backfillTasks(ctx, r) },
		func() error { return taskechodb.EnsureIndexes(ctx, db) },
	}
	for i, phase := range phases {
		if err := phase(); err != nil {
			return r, err
		}
		if step != nil {
			step(i+1, len(phases))
		}
	}
	return r, nil
}

// migration is one run over the echo collections.
type migration struct {
	projects, queues, tasks *mongo.Collection
}

// migrateProjects converts TaskEcho project documents and returns every project's _id → project_id.
func (s *migration) migrateProjects(ctx context.Context, r *Report) (map[bson.ObjectID]string, error) {
	docs, err := findAll[bson.M](ctx, s.projects, bson.M{}, "projects")
	if err != nil {
		return nil, err
	}
	ids := map[bson.ObjectID]string{}
	for _, d := range docs {
		oid, _ := d["_id"].(bson.ObjectID)
		if pid, ok := d["project_id"].(string); ok {
			ids[oid] = pid
			continue
		}
		pid, ok := d["projectId"].(string)
		if !ok {
			continue
		}
		set := bson.M{"project_id": pid, "client_info": d["clientInfo"], "git_info": d["gitInfo"],
			"last_task_at": d["lastTaskAt"], "created_at": orNow(d["createdAt"]), "updated_at": orNow(d["updatedAt"])}
		if _, err := s.projects.UpdateOne(ctx, bson.M{"_id": oid}, bson.M{"$set": set}); err != nil {
			return nil, wrap("convert project "+pid, err)
		}
		ids[oid] = pid
		r.ProjectsConverted++
	}
	return ids, nil
}

func orNow(v any) any {
	if v == nil {
		return time.Now().UTC()
	}
	return v
}

// migrateQueues moves TaskEcho's embedded queue tasks into the tasks collection.
func (s *migration) migrateQueues(ctx context.Context, projectIDs map[bson.ObjectID]string, r *Report) error {
	// A one-time migration reads every TaskEcho queue document.
	docs, err := findAll[bson.M](mongox.DeliberateScan(ctx), s.queues, bson.M{"queueId": bson.M{"$exists": true}}, "queues")
	if err != nil {
		return err
	}
	for _, q := range docs {
		oid, _ := q["_id"].(bson.ObjectID)
		pOID, _ := q["projectId"].(bson.ObjectID)
		pid, ok := projectIDs[pOID]
		qid, _ := q["queueId"].(string)
		if !ok || qid == "" {
			return fmt.Errorf("migrate queue %s: project %s not found", oid.Hex(), pOID.Hex())
		}
		tasks, _ := q["tasks"].(bson.A)
		for _, raw := range tasks {
			if n, err := s.importTask(ctx, pid, &qid, docMap(raw)); err != nil {
				return err
			} else {
				r.TasksImported += n
			}
		}
		set := bson.M{"project_id": pid, "queue_id": qid, "last_task_at": q["lastTaskAt"],
			"created_at": orNow(q["createdAt"]), "updated_at": orNow(q["updatedAt"])}
		upd := bson.M{"$set": set, "$unset": bson.M{"tasks": "", "queueId": "", "projectId": ""}}
		if _, err := s.queues.UpdateOne(ctx, bson.M{"_id": oid}, upd); err != nil {
			return wrap("convert queue "+qid, err)
		}
		r.QueuesConverted++
	}
	return nil
}

// importTask inserts one TaskEcho embedded task; an existing key means a previous run did it.
func (s *migration) importTask(ctx context.Context, projectID string, queueID *string, d bson.M) (int64, error) {
	id, _ := d["id"].(string)
	if id == "" {
		return 0, nil
	}
	doc := bson.M{
		"key": taskecho.TaskKey(projectID, queueID, id), "rev": int64(0), "project_id": projectID, "queue_id": queueID, "task_id": id,
		"name": d["name"], "prompt": d["prompt"], "spec_file": orArr(d["spec_file"]), "status": orStr(d["status"], taskecho.StatusPending),
		"report": d["report"], "tags": orArr(d["tags"]), "source": orStr(d["source"], taskecho.SourceClient),
		"created_at": orNow(d["created_at"]), "updated_at": orNow(d["updated_at"]), "server_modified_at": d["server_modified_at"],
		"pulled_at": d["pulled_at"], "pulled_by": d["pulled_by"], "lease_id": nil, "lease_expires_at": nil,
		"priority": d["priority"], "priority_rank": legacyRank(d["priority"]), "expires_at": d["expires_at"],
		"archived_at": nil, "deleted_at": d["deleted_at"], "deleted_reason": deletedReason(d["deleted_at"]),
		"pull_history": legacyHistory(d["pull_history"]), "messages": legacyMessages(d["messages"]), "logs": legacyLogs(d["logs"]),
	}
	_, err := s.tasks.InsertOne(ctx, doc)
	if mongo.IsDuplicateKeyError(err) {
		return 0, nil
	}
	if err != nil {
		return 0, wrap("import task "+id, err)
	}
	return 1, nil
}

func orArr(v any) any {
	if v == nil {
		return bson.A{}
	}
	return v
}

func orStr(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

func deletedReason(v any) any {
	if v == nil {
		return nil
	}
	return taskecho.DeletedByServer
}

// legacyRank ranks a TaskEcho priority (label or number) on the 1–10 scale.
func legacyRank(v any) int {
	switch x := v.(type) {
	case string:
		return taskecho.PriorityLabelRank(x)
	case int32:
		return int(x)
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

// convertEach converts each document of a TaskEcho array (v; missing reads as empty) with conv.
func convertEach(v any, conv func(m bson.M) bson.M) bson.A {
	out := bson.A{}
	arr, _ := v.(bson.A)
	for _, raw := range arr {
		out = append(out, conv(docMap(raw)))
	}
	return out
}

func legacyHistory(v any) bson.A {
	return convertEach(v, func(m bson.M) bson.M {
		entry := bson.M{"lease_id": "legacy", "pulled_at": m["pulled_at"], "pulled_by": orStr(m["pulled_by"], "unknown"),
			"released_at": m["released_at"], "released_by": m["released_by"], "reason": nil, "pushed_at": nil}
		if m["released_at"] != nil {
			entry["reason"] = taskecho.ReleaseClient
			if m["released_by"] == "system-timeout" {
				entry["reason"] = taskecho.ReleaseTimeout
			}
		} else {
			// TaskEcho left entries open when the client pushed; the lease is not carried over.
			entry["released_at"], entry["released_by"], entry["reason"] = m["pulled_at"], "migration", taskecho.ReleaseServer
		}
		return entry
	})
}

func legacyMessages(v any) bson.A {
	return convertEach(v, func(m bson.M) bson.M {
		return bson.M{"role": m["role"], "content": m["content"], "session_id": m["sessionId"], "created_at": orNow(m["createdAt"])}
	})
}

func legacyLogs(v any) bson.A {
	return convertEach(v, func(m bson.M) bson.M {
		return bson.M{"content": m["content"], "created_at": orNow(m["createdAt"])}
	})
}

// backfillTasks gives every task the fields the current model expects, only where missing.
func (s *migration) backfillTasks(ctx context.Context, r *Report) error {
	// TaskEcho's project-level tasks (camelCase taskId) are server tasks.
	if err := s.convertLegacyProjectTasks(ctx, r); err != nil {
		return err
	}
	steps := []struct {
		field string
		value any
		count *int64
	}{
		{"source", taskecho.SourceClient, &r.SourceBackfilled},
		{"pulled_at", nil, &r.PulledAtAdded},
		{"pulled_by", nil, &r.FieldsBackfilled},
		{"lease_id", nil, &r.FieldsBackfilled},
		{"lease_expires_at", nil, &r.FieldsBackfilled},
		{"deleted_at", nil, &r.FieldsBackfilled},
		{"archived_at", nil, &r.FieldsBackfilled},
		{"pull_history", bson.A{}, &r.FieldsBackfilled},
		{"priority_rank", 0, &r.FieldsBackfilled},
		{"rev", int64(0), &r.FieldsBackfilled},
	}
	for _, st := range steps {
		// A backfill visits every task once, at migration.
		res, err := s.tasks.UpdateMany(mongox.DeliberateScan(ctx), bson.M{st.field: bson.M{"$exists": false}}, bson.M{"$set": bson.M{st.field: st.value}})
		if err != nil {
			return wrap("backfill "+st.field, err)
		}
		*st.count += res.ModifiedCount
	}
	return nil
}

func (s *migration) convertLegacyProjectTasks(ctx context.Context, r *Report) error {
	docs, err := findAll[bson.M](ctx, s.tasks, bson.M{"taskId": bson.M{"$exists": true}, "key": bson.M{"$exists": false}}, "legacy project tasks")
	if err != nil {
		return err
	}
	ps, err := findAll[taskecho.Project](ctx, s.projects, bson.M{}, "projects")
	if err != nil {
		return err
	}
	projects := map[bson.ObjectID]string{}
	for _, p := range ps {
		projects[bson.ObjectID(p.ID)] = p.ProjectID
	}
	for _, d := range docs {
		pOID, _ := d["projectId"].(bson.ObjectID)
		pid, ok := projects[pOID]
		tid, _ := d["taskId"].(string)
		if !ok || tid == "" {
			continue
		}
		d["id"] = tid
		if d["source"] == nil {
			d["source"] = taskecho.SourceServer
		}
		if _, err := s.importTask(ctx, pid, nil, d); err != nil {
			return err
		}
		if _, err := s.tasks.DeleteOne(ctx, bson.M{"_id": d["_id"]}); err != nil {
			return wrap("remove converted task "+tid, err)
		}
		r.TasksImported++
	}
	return nil
}

func wrap(op string, err error) error { return fmt.Errorf("%s: %w", op, err) }

// findAll reads every document of coll that filter matches; what names them in its errors.
func findAll[T any](ctx context.Context, coll *mongo.Collection, filter bson.M, what string) ([]T, error) {
	cur, err := coll.Find(ctx, filter)
	if err != nil {
		return nil, wrap("read "+what, err)
	}
	var docs []T
	if err := cur.All(ctx, &docs); err != nil {
		return nil, wrap("decode "+what, err)
	}
	return docs, nil
}

// docMap reads a nested document whichever way the driver decoded it.
func docMap(v any) bson.M {
	switch d := v.(type) {
	case bson.M:
		return d
	case bson.D:
		m := make(bson.M, len(d))
		for _, e := range d {
			m[e.Key] = e.Value
		}
		return m
	}
	return bson.M{}
}
