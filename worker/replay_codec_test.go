package worker

import (
	"crypto/rand"
	"encoding/base64"
	"testing"

	sdkworker "go.temporal.io/sdk/worker"

	"github.com/taskloom/taskloom/internal/codec"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	crawlwf "github.com/taskloom/taskloom/workflows/crawl"
	entrywf "github.com/taskloom/taskloom/workflows/entry"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
	taskechowf "github.com/taskloom/taskloom/workflows/taskecho"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// A worker turned to payload encryption (TEMPORAL_CODEC_KEYS) still replays every history
// recorded before: the codec passes plain payloads through, so turning encryption on does not
// break the executions that are running at that moment.
func TestRecordedHistoriesReplayWithEncryptionOn(t *testing.T) {
	secret := make([]byte, codec.KeySize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	pc, err := codec.FromSpec("k1:" + base64.StdEncoding.EncodeToString(secret))
	if err != nil {
		t.Fatal(err)
	}
	dc := codec.DataConverter(pc)
	for subsystem, register := range map[string]func(sdkworker.Registry){
		"crawl":    func(r sdkworker.Registry) { crawlwf.Register(r, nil) },
		"entry":    func(r sdkworker.Registry) { entrywf.Register(r, nil) },
		"pipeline": func(r sdkworker.Registry) { pipelinewf.Register(r, nil) },
		"taskecho": func(r sdkworker.Registry) { taskechowf.Register(r, nil) },
		"webhook":  func(r sdkworker.Registry) { webhookwf.Register(r, nil) },
	} {
		t.Run(subsystem, func(t *testing.T) { histories.ReplayWith(t, subsystem, register, dc) })
	}
}
