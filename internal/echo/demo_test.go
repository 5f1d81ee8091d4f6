package echo

import "testing"

func TestSeedDemoIsPullableAndRepeatable(t *testing.T) {
	f := newFixture(t)
	for range 2 {
		pid, err := SeedDemo(f.ctx, f.svc)
		if err != nil || pid != DemoProjectID {
			t.Fatalf("seed: %q %v", pid, err)
		}
	}
	r := f.pull("demo-client", PullFilter{ProjectID: DemoProjectID})
	if got := ids(r.Tasks); len(got) != 5 || got[0] != "server-q1" || got[1] != "server-high" {
		t.Fatalf("demo pull %v, want the five server tasks, highest priority first", got)
	}
}
