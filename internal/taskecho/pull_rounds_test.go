package taskecho

import (
	"slices"
	"testing"
)

// A later round of one pull can take its candidates from a read made before an earlier round of
// the same pull claimed them: reads are shared and overlap the claims of other rounds and pulls.
// Such a stale listing's statement matches nothing, so the round must not report the task as won
// a second time; otherwise the client receives one task twice in one batch (seen once in a
// 10,000-task chaos run as "delivered 2 times").
func TestClaimRoundDoesNotReportATaskAnEarlierRoundWon(t *testing.T) {
	f := newFixture(t)
	f.serverTask("p", "", "a", nil)
	f.serverTask("p", "", "b", nil)
	read := func() []*Task {
		t.Helper()
		ts, err := f.svc.pullCandidates(f.ctx, PullFilter{ProjectID: "p"}, f.now, 10)
		if err != nil || len(ts) != 2 {
			t.Fatalf("candidates %v (%v), want a and b", ids(ts), err)
		}
		return ts
	}
	early, stale := read(), read() // two reads made before any claim, e.g. by two rounds
	res := &PullResult{LeaseID: newLeaseID(), PulledAt: f.now, LeaseExpiresAt: f.now.Add(f.svc.Settings().PullTimeout)}
	first, err := f.svc.claimForPull(f.ctx, Actor{Name: "w"}, early[:1], res)
	if err != nil || !slices.Equal(ids(first), []string{"a"}) {
		t.Fatalf("round 1 won %v (%v), want a", ids(first), err)
	}
	second, err := f.svc.claimForPull(f.ctx, Actor{Name: "w"}, stale, res)
	if err != nil || !slices.Equal(ids(second), []string{"b"}) {
		t.Fatalf("round 2 won %v (%v), want only b: a was won by round 1 and its stale statement matched nothing", ids(second), err)
	}
}
