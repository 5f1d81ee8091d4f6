package worker

import (
	"testing"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/platform"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
)

// Without WEBHOOK_RECORDS_SQLITE the activities get no record source at all. A typed nil in the
// interface made every sweep panic in the production worker (captureByTaskIDs called a nil
// *capturedb.Records), which tests that build the activities by hand never saw.
func TestOpenRecordsWithoutSQLiteGivesNoSource(t *testing.T) {
	cfg := config.Defaults()
	cfg.Webhook.RecordsSQLite = ""
	// Held as the activities hold it: the interface.
	var r bitable.RecordSource
	r, err := openRecords(&platform.Platform{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		t.Fatalf("record source = %#v, want nil", r)
	}
}
