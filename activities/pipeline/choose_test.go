package pipeline

import (
	"testing"

	"github.com/taskloom/taskloom/internal/mongox"
	"github.com/taskloom/taskloom/internal/pipeline"
)

// An operator pins the only candidate up while workers still hold it down in their cache: the
// next step reads the documents again before refusing, so it runs at once.
func TestChooseRereadsBeforeRefusing(t *testing.T) {
	a, ctx := monitoredActivities(t)
	const ref = "tencent_cloud_vod"
	if _, err := storeOf(a).SetHealthManual(ctx, ref, pipeline.HealthDown, true); err != nil {
		t.Fatal(err)
	}
	if res, err := a.PipelineChooseProviders(ctx, pipeline.ChooseRequest{Candidates: []string{ref}}); err != nil || len(res.Usable) != 0 {
		t.Fatalf("pinned down: %+v, %v", res, err)
	}
	if _, err := storeOf(a).SetHealthManual(ctx, ref, pipeline.HealthUp, true); err != nil {
		t.Fatal(err)
	}
	res, err := a.PipelineChooseProviders(ctx, pipeline.ChooseRequest{Candidates: []string{ref}})
	if err != nil || len(res.Usable) != 1 {
		t.Fatalf("pinned up a moment ago: %+v, %v, want it usable", res, err)
	}
	tctx, tally := mongox.WithTally(ctx)
	if _, err := a.PipelineChooseProviders(tctx, pipeline.ChooseRequest{Candidates: []string{ref}}); err != nil {
		t.Fatal(err)
	}
	if n := tally.Total(); n != 0 {
		t.Fatalf("a usable candidate in the cache cost %d MongoDB commands, want 0", n)
	}
}
