package pipeline

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestVerifier(t *testing.T) {
	secret := []byte("s3cret")
	now := time.Unix(1_800_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte(`{"status":"success","output":{"video_url":"v"}}`)
	v := Verifier{Secret: secret, Now: func() time.Time { return now }}
	base := CallbackRequest{TaskID: "t1", StepIndex: "1", Timestamp: ts, Body: body}

	good1 := base
	good1.Signature = SignV1(secret, "t1", "1", ts)
	good2 := base
	good2.Signature256 = SignV2(secret, "t1", "1", ts, body)
	wrongSecret := base
	wrongSecret.Signature = SignV1([]byte("other"), "t1", "1", ts)
	oldTS := strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10)
	expired := CallbackRequest{TaskID: "t1", StepIndex: "1", Timestamp: oldTS, Signature: SignV1(secret, "t1", "1", oldTS)}
	tampered := good2
	tampered.Body = []byte(`{"status":"success","output":{"video_url":"evil"}}`)
	tamperedWithV1 := tampered
	tamperedWithV1.Signature = SignV1(secret, "t1", "1", ts)
	otherStep := good1
	otherStep.StepIndex = "2"

	cases := []struct {
		name string
		v    Verifier
		req  CallbackRequest
		want error
	}{
		{"v1 ok", v, good1, nil},
		{"v2 ok", v, good2, nil},
		{"wrong secret", v, wrongSecret, ErrSignatureMismatch},
		{"expired", v, expired, ErrSignatureExpired},
		{"tampered body", v, tampered, ErrSignatureMismatch},
		{"tampered body, valid v1 too", v, tamperedWithV1, ErrSignatureMismatch},
		{"signature for another step", v, otherStep, ErrSignatureMismatch},
		{"missing", v, base, ErrSignatureMissing},
		{"bad timestamp", v, CallbackRequest{TaskID: "t1", StepIndex: "1", Timestamp: "soon", Signature: "x"}, ErrTimestampInvalid},
		{"v1 refused when body signature required", Verifier{Secret: secret, RequireBody: true, Now: v.Now}, good1, ErrBodySignatureNeeded},
		{"v2 ok when required", Verifier{Secret: secret, RequireBody: true, Now: v.Now}, good2, nil},
	}
	for _, c := range cases {
		err := c.v.Verify(c.req)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestSignV1IsThePlainConcatenation(t *testing.T) {
	// v1 signs `${taskId}${stepIndex}${timestamp}` with no separators, as SCF functions send it.
	if SignV1([]byte("k"), "42", "1", "1700000000") != SignV1([]byte("k"), "421", "", "1700000000") {
		t.Fatal("v1 must be the plain concatenation of task id, step index and timestamp")
	}
}
