package bitable

import (
	"context"
	"testing"

	"github.com/taskloom/taskloom/internal/webhook"
)

// recordsByID is a RecordSource over a map, standing in for the capture side's database.
type recordsByID map[string][]map[string]any

func (r recordsByID) ByTaskIDs(_ context.Context, ids []string) ([]map[string]any, error) {
	var out []map[string]any
	for _, id := range ids {
		out = append(out, r[id]...)
	}
	return out, nil
}

// piracy_general_search takes its Records from the configured record source, in TaskID order,
// and reads nothing from Feishu for them.
func TestPiracyPayloadRecordsFromRecordSource(t *testing.T) {
	src := recordsByID{"7": {{"url": "https://x/7"}}, "8": {{"url": "https://x/8"}}}
	tables := &Tables{Records: src} // no Feishu client: nothing may be read from Feishu
	p, err := tables.BuildPayload(context.Background(), webhook.Row{BizType: webhook.BizPiracyGeneralSearch, RecordID: "rec1",
		TaskIDs: []string{"8", "7"}, DramaInfo: `{"短剧名称":"demo"}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Records) != 2 || p.Records[0]["url"] != "https://x/8" || p.Drama["短剧名称"] != "demo" {
		t.Fatalf("payload %+v", p)
	}
}
