package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxFairnessKeyLen is the longest fairness key Temporal accepts (bytes).
const MaxFairnessKeyLen = 64

// FairnessKey is the Temporal fairness key of a user's pipeline tasks: the server dispatches a
// task queue's backlog in turn over these keys, so one user's burst does not make another
// user's tasks wait behind it (docs/pipelines.md "Fair under load"). It is the user id itself, readable in
// the Web UI, unless that is longer than Temporal allows; then a digest of it, still one key
// per user.
func FairnessKey(userID string) string {
	if len(userID) <= MaxFairnessKeyLen {
		return userID
	}
	sum := sha256.Sum256([]byte(userID))
	return "user-sha256-" + hex.EncodeToString(sum[:16])
}
