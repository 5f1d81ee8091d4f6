package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/mongox"
)

// ErrSchemaConflict: a published name+version is immutable (the seed forbids changing a live
// pipeline's steps); publishing a new version is how a pipeline changes.
var ErrSchemaConflict = errors.New("this pipeline version is already published with a different schema; publish a new version instead")

// SchemaRecord is one pipeline_schemas document.
type SchemaRecord struct {
	Name       string    `bson:"name" json:"name"`
	Version    string    `bson:"version" json:"version"`
	Schema     Schema    `bson:"schema" json:"schema"`
	SchemaHash string    `bson:"schema_sha256" json:"-"`
	CreatedAt  time.Time `bson:"created_at" json:"created_at"`
	UpdatedAt  time.Time `bson:"updated_at" json:"updated_at"`
}

// SchemaHash is the SHA-256 of the schema's canonical JSON (encoding/json sorts map keys).
func SchemaHash(s *Schema) (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode schema: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// PublishSchema stores a validated definition. Publishing the identical schema again is a no-op
// that returns the stored record (created=false); a different schema under the same name+version
// is ErrSchemaConflict.
func (s *Store) PublishSchema(ctx context.Context, d *Definition) (rec *SchemaRecord, created bool, err error) {
	hash, err := SchemaHash(&d.Schema)
	if err != nil {
		return nil, false, err
	}
	now := s.now()
	rec = &SchemaRecord{Name: d.Name, Version: d.Version, Schema: d.Schema, SchemaHash: hash, CreatedAt: now, UpdatedAt: now}
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
		return nil, false, fmt.Errorf("pipeline %s@%s: %w", d.Name, d.Version, ErrSchemaConflict)
	}
	return existing, false, nil
}

// GetSchema loads one version; an empty version means the most recently published one.
func (s *Store) GetSchema(ctx context.Context, name, version string) (*SchemaRecord, error) {
	filter := bson.D{{Key: "name", Value: name}}
	opts := options.FindOne()
	if version != "" {
		filter = append(filter, bson.E{Key: "version", Value: version})
	} else {
		opts.SetSort(bson.D{{Key: "created_at", Value: -1}})
	}
	var rec SchemaRecord
	if err := s.c(CollSchemas).FindOne(ctx, filter, opts).Decode(&rec); err != nil {
		return nil, notFound(err, fmt.Sprintf("pipeline %s@%s", name, orLatest(version)))
	}
	rec.Schema.normalize()
	return &rec, nil
}

// ListSchemas lists published versions, newest first; name filters to one pipeline when set.
func (s *Store) ListSchemas(ctx context.Context, name string, limit int64) ([]SchemaRecord, error) {
	filter := bson.D{}
	if name != "" {
		filter = bson.D{{Key: "name", Value: name}}
	}
	cur, err := s.c(CollSchemas).Find(ctx, filter,
		options.Find().SetSort(bson.D{{Key: "name", Value: 1}, {Key: "created_at", Value: -1}}).SetLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("list pipelines: %w", err)
	}
	var recs []SchemaRecord
	if err := cur.All(ctx, &recs); err != nil {
		return nil, fmt.Errorf("read pipelines: %w", err)
	}
	for i := range recs {
		recs[i].Schema.normalize()
	}
	return recs, nil
}

func (sc *Schema) normalize() {
	for i := range sc.Steps {
		if m := sc.Steps[i].InputMapping; m != nil {
			sc.Steps[i].InputMapping = mongox.JSONMap(m)
		}
	}
}

func orLatest(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}
