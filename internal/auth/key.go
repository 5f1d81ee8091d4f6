// Package auth is taskloom's one API-key system, shared by every subsystem: keys stored as
// SHA-256 hashes in Mongo `api_keys`, a permission level, an optional project binding, and the
// Echo middleware that turns a request's key into an Identity.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"
)

// Permission is a key's level; each level includes the ones below it.
type Permission string

const (
	// PermRead may read and pull.
	PermRead Permission = "read"
	// PermWrite may also push and change task state.
	PermWrite Permission = "write"
	// PermAdmin may also manage tasks, queues, keys, pipelines and operations.
	PermAdmin Permission = "admin"
)

var rank = map[Permission]int{PermRead: 1, PermWrite: 2, PermAdmin: 3}

// Valid reports whether p is a known permission.
func (p Permission) Valid() bool { return rank[p] > 0 }

// Includes reports whether p grants at least want.
func (p Permission) Includes(want Permission) bool { return rank[p] >= rank[want] && rank[want] > 0 }

// Key is an API key as stored. The plaintext is never stored: only its hash and a display
// prefix, so a leaked database does not leak credentials.
type Key struct {
	ID          string     `bson:"_id" json:"id"`
	Name        string     `bson:"name" json:"name"`
	Hash        string     `bson:"hash" json:"-"`
	Prefix      string     `bson:"prefix" json:"key_masked"`
	Permission  Permission `bson:"permission" json:"permission"`
	ProjectID   string     `bson:"project_id,omitempty" json:"project_id"`
	Active      bool       `bson:"active" json:"is_active"`
	CreatedAt   time.Time  `bson:"created_at" json:"created_at"`
	UpdatedAt   time.Time  `bson:"updated_at" json:"updated_at"`
	LastUsedAt  *time.Time `bson:"last_used_at,omitempty" json:"last_used_at"`
	Description string     `bson:"description,omitempty" json:"description,omitempty"`
}

// keyPrefix keeps TaskEcho's key format ("sk-" + 32 random bytes, base64url).
const keyPrefix = "sk-"

// Generate returns a new random plaintext key.
func Generate() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate api key: %w", err)
	}
	return keyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Hash is the stored form of a plaintext key. Keys carry 256 bits of entropy, so a fast hash
// is safe here and keeps the per-request lookup a single indexed read.
func Hash(plaintext string) string {
	sum := sha256.Sum256([]byte(plaintext))
	return hex.EncodeToString(sum[:])
}

// Mask is the display form: enough to recognise a key, not enough to use it.
func Mask(plaintext string) string {
	if len(plaintext) < 12 {
		return "sk-****"
	}
	return plaintext[:7] + "****" + plaintext[len(plaintext)-4:]
}
