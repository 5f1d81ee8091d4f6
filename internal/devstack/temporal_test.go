package devstack

import (
	"os"
	"strings"
	"testing"
)

// temporal-dev.sh (make dev) must run the server with the same dynamic configuration as the
// tests and the bench.
func TestTemporalDevScriptPassesTheDynamicConfig(t *testing.T) {
	script, err := os.ReadFile("../../temporal-dev.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range TemporalDynamicConfig {
		if !strings.Contains(string(script), "--dynamic-config-value "+kv) {
			t.Errorf("temporal-dev.sh does not pass --dynamic-config-value %s", kv)
		}
	}
}
