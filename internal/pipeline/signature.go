package pipeline

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Callback signature headers. X-Internal-Signature (v1) signs the task, step and X-Timestamp; the
// v2 header X-Internal-Signature-256 also covers the body, which v1 does not (a captured callback
// could otherwise be replayed with a different output inside the five-minute window).
const (
	HeaderSignature    = "X-Internal-Signature"
	HeaderSignature256 = "X-Internal-Signature-256"
	HeaderTimestamp    = "X-Timestamp"
)

// DefaultCallbackMaxSkew is the replay window: X-Timestamp may be at most 5 minutes off.
const DefaultCallbackMaxSkew = 5 * time.Minute

// Reasons a callback signature is refused; the API answers 401 with the message.
var (
	ErrSignatureMissing    = errors.New("missing signature header (X-Internal-Signature or X-Internal-Signature-256)")
	ErrBodySignatureNeeded = errors.New("X-Internal-Signature-256 (body signature) is required")
	ErrTimestampInvalid    = errors.New("X-Timestamp must be Unix seconds")
	ErrSignatureExpired    = errors.New("signature expired (X-Timestamp outside the allowed window)")
	ErrSignatureMismatch   = errors.New("signature verification failed")
)

// SignV1 is the v1 signature SCF functions send: hex HMAC-SHA256 of taskId+stepIndex+timestamp,
// concatenated without separators.
func SignV1(secret []byte, taskID, stepIndex, timestamp string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(taskID + stepIndex + timestamp))
	return hex.EncodeToString(m.Sum(nil))
}

// SignV2 is hex HMAC-SHA256 of "taskId.stepIndex.timestamp.sha256hex(body)": the separators remove
// v1's concatenation ambiguity and the body hash binds the payload.
func SignV2(secret []byte, taskID, stepIndex, timestamp string, body []byte) string {
	bodySum := sha256.Sum256(body)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(taskID + "." + stepIndex + "." + timestamp + "." + hex.EncodeToString(bodySum[:])))
	return hex.EncodeToString(m.Sum(nil))
}

// CallbackRequest is what the verifier needs from one HTTP callback.
type CallbackRequest struct {
	TaskID       string
	StepIndex    string // as written in the URL path, which is what the sender signed
	Timestamp    string
	Signature    string // X-Internal-Signature
	Signature256 string // X-Internal-Signature-256
	Body         []byte
}

// Verifier checks callback signatures.
type Verifier struct {
	Secret []byte
	// RequireBody refuses callbacks that carry only the v1 signature.
	RequireBody bool
	MaxSkew     time.Duration
	Now         func() time.Time
}

// Verify returns nil for an authentic, fresh callback. When the v2 header is present it alone
// decides (a valid v1 signature cannot rescue a tampered body).
func (v Verifier) Verify(r CallbackRequest) error {
	if r.Signature == "" && r.Signature256 == "" {
		return ErrSignatureMissing
	}
	if v.RequireBody && r.Signature256 == "" {
		return ErrBodySignatureNeeded
	}
	ts, err := strconv.ParseInt(r.Timestamp, 10, 64)
	if err != nil {
		return ErrTimestampInvalid
	}
	skew := v.MaxSkew
	if skew <= 0 {
		skew = DefaultCallbackMaxSkew
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	if d := now().Sub(time.Unix(ts, 0)); d > skew || d < -skew {
		return fmt.Errorf("%w: %s off", ErrSignatureExpired, d.Round(time.Second))
	}
	var want, got string
	if r.Signature256 != "" {
		want, got = SignV2(v.Secret, r.TaskID, r.StepIndex, r.Timestamp, r.Body), r.Signature256
	} else {
		want, got = SignV1(v.Secret, r.TaskID, r.StepIndex, r.Timestamp), r.Signature
	}
	if !hmac.Equal([]byte(want), []byte(got)) {
		return ErrSignatureMismatch
	}
	return nil
}
