package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// MaxIdempotencyKeyLen bounds an Idempotency-Key header value.
const MaxIdempotencyKeyLen = 255

// CheckIdempotencyKey accepts 1–255 printable ASCII characters (what an HTTP header carries
// safely); the message names the problem.
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return fmt.Errorf("Idempotency-Key must be 1-%d characters", MaxIdempotencyKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return fmt.Errorf("Idempotency-Key may hold only printable ASCII without spaces (byte %d is 0x%02x)", i, key[i])
		}
	}
	return nil
}

// TaskIDForKey derives the task id (and so the workflow ID) from an idempotency key within a
// scope (the caller's identity), so every API replica maps a retried request to the same task.
// The result has NewTaskID's shape: 24 hex digits.
func TaskIDForKey(scope, key string) string {
	sum := sha256.Sum256([]byte("pipeline-task\x00" + scope + "\x00" + key))
	return hex.EncodeToString(sum[:12])
}

// TaskRequest is what creates a pipeline task; its hash tells a retry from a different request
// under the same idempotency key.
type TaskRequest struct {
	Pipeline  string         `json:"pipeline"`
	Version   string         `json:"version"`
	UserID    string         `json:"user_id"`
	FeatureID string         `json:"feature_id"`
	InputData map[string]any `json:"input_data"`
}

// Hash is the hex SHA-256 of the request's canonical JSON (encoding/json sorts map keys).
func (r TaskRequest) Hash() (string, error) {
	if r.InputData == nil {
		r.InputData = map[string]any{}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("hash task request: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}
