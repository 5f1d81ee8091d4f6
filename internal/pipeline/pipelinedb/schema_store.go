package pipelinedb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// PublishSchema stores a validated definition. Publishing the identical schema again is a no-op
// that returns the stored record (created=false); a different schema under the same name+version
// is ErrSchemaConflict.
func (s *Store) PublishSchema(ctx context.Context, d *pipeline.Definition) (rec *pipeline.SchemaRecord, created bool, err error) {
	hash, err := pipeline.SchemaHash(&d.Schema)
	if err != nil {
		return nil, false, err
	}
	now := s.now()
	rec = &pipeline.SchemaRecord{Name: d.Name, Version: d.Version, Schema: d.Schema, SchemaHash: hash, CreatedAt: now, UpdatedAt: now}
	_, err = s.c(CollSchemas).InsertOne(ctx, rec)
	if err == nil {
		return rec, true, nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return nil, false, fmt.Errorf("insert pipeline %s@%s: %w", d.Name, d.Version, err)
	}
	existing, err := s.GetSchema(ctx, d.Name, d.Version)
	if err != nil {
		return nil, false, err
	}
	if existing.SchemaHash != hash {
		return nil, false, fmt.Errorf("pipeline %s@%s: %w", d.Name, d.Version, pipeline.ErrSchemaConflict)
	}
	return existing, false, nil
}

// GetSchema loads one version; an empty version means the most recently published one.
func (s *Store) GetSchema(ctx context.Context, name, version string) (*pipeline.SchemaRecord, error) {
	filter := bson.D{{Key: "name", Value: name}}
	opts := options.FindOne()
	if version != "" {
		filter = append(filter, bson.E{Key: "version", Value: version})
	} else {
		opts.SetSort(bson.D{{Key: "created_at", Value: -1}})
	}
	var rec pipeline.SchemaRecord
	if err := s.c(CollSchemas).FindOne(ctx, filter, opts).Decode(&rec); err != nil {
		return nil, notFound(err, fmt.Sprintf("pipeline %s@%s", name, pipeline.VersionLabel(version)))
	}
	normalize(&rec.Schema)
	return &rec, nil
}

// ListSchemas lists published versions, newest first; name filters to one pipeline when set.
func (s *Store) ListSchemas(ctx context.Context, name string, limit int64) ([]pipeline.SchemaRecord, error) {
	filter := bson.D{}
	if name != "" {
		filter = bson.D{{Key: "name", Value: name}}
	}
	cur, err := s.c(CollSchemas).Find(ctx, filter,
		options.Find().SetSort(bson.D{{Key: "name", Value: 1}, {Key: "created_at", Value: -1}}).SetLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("list pipelines: %w", err)
	}
	var recs []pipeline.SchemaRecord
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("read pipelines: %w", err)
	}
	for i := range recs {
		normalize(&recs[i].Schema)
	}
	return recs, nil
}

// normalize turns the decoded input mappings back into plain JSON maps.
func normalize(sc *pipeline.Schema) {
	for i := range sc.Steps {
		if m := sc.Steps[i].InputMapping; m != nil {
			sc.Steps[i].InputMapping = mongox.JSONMap(m)
		}
	}
}
