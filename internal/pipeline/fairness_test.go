package pipeline

import (
	"strings"
	"testing"
)

func TestFairnessKeyIsTheUserWithinTemporalsLimit(t *testing.T) {
	if got := FairnessKey("user-42"); got != "user-42" {
		t.Fatalf("FairnessKey(user-42) = %q, want the user id", got)
	}
	exact := strings.Repeat("u", MaxFairnessKeyLen)
	if got := FairnessKey(exact); got != exact {
		t.Fatalf("a %d-byte user id should be its own key, got %q", MaxFairnessKeyLen, got)
	}
	long1, long2 := strings.Repeat("a", 100), strings.Repeat("a", 99)+"b"
	k1, k2 := FairnessKey(long1), FairnessKey(long2)
	if len(k1) > MaxFairnessKeyLen || len(k2) > MaxFairnessKeyLen {
		t.Fatalf("keys of long user ids exceed %d bytes: %q, %q", MaxFairnessKeyLen, k1, k2)
	}
	if k1 == k2 || k1 != FairnessKey(long1) {
		t.Fatalf("long user ids need distinct, stable keys: %q, %q", k1, k2)
	}
}
