package e2e

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/devstack/feishuemu"
	"github.com/taskloom/taskloom/internal/testenv"
)

// The demo Bitable base of testdata/feishu/taskloom_base.json: tables tblTasks, tblWebhook,
// tblDrama and tblCapture, also reachable through the wiki node FeishuDemoWikiNode.
const (
	FeishuDemoBase     = "bascnTaskloomDemo"
	FeishuDemoWikiNode = "wikcnTaskloomDemo"
)

// FeishuDemo is the demo base fixture with the rows of the tables named in empty removed, so a
// test starts from the rows it writes.
func FeishuDemo(t testing.TB, empty ...string) feishuemu.Fixture {
	t.Helper()
	fx, err := feishuemu.LoadFixtureFile(filepath.Join(testenv.RepoRoot(), "testdata", "feishu", "taskloom_base.json"))
	if err != nil {
		t.Fatalf("e2e feishu fixture: %v", err)
	}
	for i := range fx.Apps {
		for j := range fx.Apps[i].Tables {
			if slices.Contains(empty, fx.Apps[i].Tables[j].ID) {
				fx.Apps[i].Tables[j].Records = nil
			}
		}
	}
	return fx
}

// StartFeishu runs a Bitable emulator with o over fixtures (the whole demo base when none is
// given) until the test ends.
func StartFeishu(t testing.TB, o feishuemu.Options, fixtures ...feishuemu.Fixture) *feishuemu.Server {
	t.Helper()
	if len(fixtures) == 0 {
		fixtures = []feishuemu.Fixture{FeishuDemo(t)}
	}
	emu, err := feishuemu.New(o, fixtures...)
	if err != nil {
		t.Fatalf("e2e feishu emulator: %v", err)
	}
	if err := emu.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("e2e feishu emulator: %v", err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	return emu
}

// WithFeishu points the application's Feishu app at emu and the webhook tables at the demo base
// in it: the webhook result table by its wiki link, the others by base link (both URL forms
// Feishu hands out).
func WithFeishu(emu *feishuemu.Server) Option {
	return func(c *config.Config) {
		w := &c.Webhook
		w.FeishuAppID, w.FeishuAppSecret, w.FeishuBaseURL = "cli_e2e", "e2e", emu.URL()
		base := "https://x.feishu.cn/base/" + FeishuDemoBase + "?table="
		w.TaskBitableURL, w.DramaBitableURL, w.CaptureBitableURL = base+"tblTasks", base+"tblDrama", base+"tblCapture"
		w.WebhookBitableURL = "https://x.feishu.cn/wiki/" + FeishuDemoWikiNode + "?table=tblWebhook"
	}
}
