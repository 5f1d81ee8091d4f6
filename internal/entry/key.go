package entry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxKeyLen bounds an idempotency key; it is stored in Mongo and in a search attribute.
const MaxKeyLen = 512

// taskIDPrefix starts every task id (and workflow ID) of an entry task.
const taskIDPrefix = "entry-"

// taskIDHexLen is how many hex digits of the key's SHA-256 the id keeps (128 bits).
const taskIDHexLen = 32

// BuildKey is the generated idempotency key `{channel}:{workflowId}:{chatId}:{ts}`. HTTP and the CLI
// pass a time bucket as ts (see KeyTimestamp), Telegram the update id, so a redelivered update
// gets the same key.
func BuildKey(channel, workflowID, chatID, ts string) string {
	return channel + ":" + workflowID + ":" + chatID + ":" + ts
}

// KeyTimestamp is the {ts} part for HTTP and CLI requests without a key: the Unix second at the
// start of the window holding now, so repeated clicks within one window share a task. Two clicks
// on either side of a window boundary get two tasks; callers that need more send their own key.
func KeyTimestamp(now time.Time, window time.Duration) string {
	if window <= 0 {
		window = time.Second
	}
	return strconv.FormatInt(now.Truncate(window).Unix(), 10)
}

// TaskID is the taskId and Temporal workflow ID of the task with key: `entry-` and 32 hex digits
// of the key's SHA-256. Hashing keeps any key (any length, any characters) a safe ID, and the
// same key always finds the same execution.
func TaskID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return taskIDPrefix + hex.EncodeToString(sum[:])[:taskIDHexLen]
}

// ValidTaskID reports whether id has the form TaskID produces; handlers check it before any
// lookup.
func ValidTaskID(id string) bool {
	if len(id) != len(taskIDPrefix)+taskIDHexLen || !strings.HasPrefix(id, taskIDPrefix) {
		return false
	}
	for _, c := range id[len(taskIDPrefix):] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// CheckKey validates a caller-supplied idempotency key.
func CheckKey(key string) error {
	switch {
	case strings.TrimSpace(key) == "":
		return fmt.Errorf("must not be blank")
	case len(key) > MaxKeyLen:
		return fmt.Errorf("is %d bytes, at most %d allowed", len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("is not valid UTF-8")
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return fmt.Errorf("must not contain control characters")
	}
	return nil
}
