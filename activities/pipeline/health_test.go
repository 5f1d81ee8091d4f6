package pipeline

import (
	"testing"

	domain "github.com/taskloom/taskloom/internal/pipeline"
)

func TestAssessHysteresis(t *testing.T) {
	up := domain.Health{Status: domain.HealthUp}
	none := domain.CallStats{}

	h := Assess(up, probeFailed, none)
	if h.Status != domain.HealthUp || h.ConsecutiveFailures != 1 {
		t.Fatalf("one failed probe must not take a provider down: %+v", h)
	}
	h = Assess(h, probeFailed, none)
	if h.Status != domain.HealthDown {
		t.Fatalf("two failed probes: %+v", h)
	}
	h = Assess(h, probeOK, none)
	if h.Status != domain.HealthDown {
		t.Fatalf("one good probe must not bring it back: %+v", h)
	}
	h = Assess(h, probeOK, none)
	if h.Status != domain.HealthUp {
		t.Fatalf("two good probes: %+v", h)
	}

	busyBad := domain.CallStats{Calls: 10, Failures: 6, AvgMS: 100}
	if h := Assess(up, probeOK, busyBad); h.Status != domain.HealthDown || h.ErrorRate != 60 {
		t.Fatalf("60%% errors: %+v", h)
	}
	if h := Assess(up, noProbe, domain.CallStats{Calls: 10, Failures: 3, AvgMS: 100}); h.Status != domain.HealthDegraded {
		t.Fatalf("30%% errors: %+v", h)
	}
	if h := Assess(up, noProbe, domain.CallStats{Calls: 2, Failures: 2}); h.Status != domain.HealthUp {
		t.Fatalf("too few calls to judge: %+v", h)
	}
	if h := Assess(up, probeOK, domain.CallStats{Calls: 3, AvgMS: 8000}); h.Status != domain.HealthDegraded || h.AvgResponseTime != 8000 {
		t.Fatalf("slow: %+v", h)
	}
	down := domain.Health{Status: domain.HealthDown, ConsecutiveSuccesses: 1}
	if h := Assess(down, probeOK, domain.CallStats{Calls: 10, Failures: 4}); h.Status != domain.HealthDown {
		t.Fatalf("a high error rate keeps it down: %+v", h)
	}
}
