//go:build chaos

package taskecho_test

import "testing"

// TestPullersConfirmOneByOneAtScale is the pullers workload at the size users reported:
// 1,000 tasks, 8 pullers pulling 20 under an 8 s lease and confirming one by one.
func TestPullersConfirmOneByOneAtScale(t *testing.T) {
	runPullers(t, 1000)
}
