package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrSchemaConflict: a published name+version is immutable (a live pipeline's steps never
// change under its running tasks); publishing a new version is how a pipeline changes.
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
