package pipeline

import (
	"testing"

	"github.com/taskloom/taskloom/internal/pipeline"
)

func TestAssessHysteresis(t *testing.T) {
	up := pipeline.Health{Status: pipeline.HealthUp}
	none := pipeline.CallStats{}

	h := Assess(up, probeFailed, none)
	if h.Status != pipeline.HealthUp || h.ConsecutiveFailures != 1 {
		t.Fatalf("one failed probe must not take a provider down: %+v", h)
	}
	h = Assess(h, probeFailed, none)
	if h.Status != pipeline.HealthDown {
		t.Fatalf("two failed probes: %+v", h)
	}
	h = Assess(h, probeOK, none)
	if h.Status != pipeline.HealthDown {
		t.Fatalf("one good probe must not bring it back: %+v", h)
	}
	h = Assess(h, probeOK, none)
	if h.Status != pipeline.HealthUp {
		t.Fatalf("two good probes: %+v", h)
	}

	busyBad := pipeline.CallStats{Calls: 10, Failures: 6, AvgMS: 100}
	if h := Assess(up, probeOK, busyBad); h.Status != pipeline.HealthDown || h.ErrorRate != 60 {
		t.Fatalf("60%% errors: %+v", h)
	}
	if h := Assess(up, noProbe, pipeline.CallStats{Calls: 10, Failures: 3, AvgMS: 100}); h.Status != pipeline.HealthDegraded {
		t.Fatalf("30%% errors: %+v", h)
	}
	if h := Assess(up, noProbe, pipeline.CallStats{Calls: 2, Failures: 2}); h.Status != pipeline.HealthUp {
		t.Fatalf("too few calls to judge: %+v", h)
	}
	if h := Assess(up, probeOK, pipeline.CallStats{Calls: 3, AvgMS: 8000}); h.Status != pipeline.HealthDegraded || h.AvgResponseTime != 8000 {
		t.Fatalf("slow: %+v", h)
	}
	down := pipeline.Health{Status: pipeline.HealthDown, ConsecutiveSuccesses: 1}
	if h := Assess(down, probeOK, pipeline.CallStats{Calls: 10, Failures: 4}); h.Status != pipeline.HealthDown {
		t.Fatalf("a high error rate keeps it down: %+v", h)
	}
}
