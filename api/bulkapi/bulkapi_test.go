package bulkapi

import "testing"

// The pipeline's answers use snake_case keys for the same names the entry's use in camelCase.
func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"bulkId": "bulk_id", "progressUrl": "progress_url", "dryRun": "dry_run", "count": "count"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}
