package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/crawl"
	"github.com/taskloom/taskloom/internal/crawl/countscript"
	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/uisession"
)

// consoleVendor is the one provider of the console tests' pipeline: POST /reply echoes the
// text, or answers 503 while fail is set (so entry tasks end suspended and pipelines failed).
type consoleVendor struct {
	srv  *httptest.Server
	fail atomic.Bool
}

func startConsoleVendor(t *testing.T) *consoleVendor {
	v := &consoleVendor{}
	v.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v.fail.Load() {
			http.Error(w, `{"error":"vendor down"}`, http.StatusServiceUnavailable)
			return
		}
		var in struct {
			Text string `json:"text"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"reply": "echo: " + in.Text})
	}))
	t.Cleanup(v.srv.Close)
	return v
}

// consoleFixture is the whole application with a one-step pipeline over the vendor, its quota,
// and entry retries short enough for a test: one retry, then suspended.
type consoleFixture struct {
	t        *testing.T
	env      *e2e.Env
	vendor   *consoleVendor
	pipeline string
	provider string
}

func newConsoleFixture(t *testing.T) *consoleFixture {
	t.Helper()
	// The console counts and lists executions across its namespace; the test expects exact
	// numbers, so no other test's executions may be in it.
	env := e2e.New(t, e2e.OwnNamespace(t), func(c *config.Config) {
		c.Entry.RetryMax = 1
		c.Entry.HTTPRetryDelays = []time.Duration{300 * time.Millisecond}
		c.Entry.IdempotencyWindow = time.Hour
		c.Entry.SuspendedCheckInterval = time.Hour
		// A crawler that prints a line and exits without announcing anything: its task fails
		// when the completion deadline passes, as a crawl that lost its messages does.
		c.Crawl.CrawlerCommand = "echo crawling {id}"
		c.Crawl.CompletionDeadline = 2 * time.Second
		// A group of its own: records of this test are counted by this env's consumer only.
		c.Crawl.ConsumerGroup = testenv.Unique("console-crawl-")
	})
	f := &consoleFixture{t: t, env: env, vendor: startConsoleVendor(t), pipeline: testenv.Unique("console_echo_")}
	f.provider = f.pipeline + "_vendor"
	store, ctx := pipelinedb.New(env.Platform.Mongo), env.Context()
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: f.provider, BaseURL: f.vendor.srv.URL}); err != nil {
		t.Fatal(err)
	}
	def := &pipeline.Definition{Name: f.pipeline, Version: "1.0.0", Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "reply", Type: pipeline.StepSyncAPI, ProviderRef: f.provider, Endpoint: "/reply",
		InputMapping:  map[string]any{"text": "${input_data.user_text}"},
		OutputMapping: map[string]string{"text": "$.reply"},
		Retry:         &pipeline.Retry{MaxAttempts: 1}, TimeoutSeconds: 20,
	}}}}
	if _, _, err := store.PublishSchema(ctx, def); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetQuota(ctx, "entry", "entry", 1000); err != nil {
		t.Fatal(err)
	}
	return f
}

// crawlRecords sends what a crawler that lost its TASK_INIT would leave behind for task id, to
// the real consumer: a tweet, a copy of it, a truncated record naming the task and one naming
// none. It waits until the consumer counted them (processed 1, duplicate 1, dead-lettered 1).
func (f *consoleFixture) crawlRecords(id int64) {
	f.t.Helper()
	topics := crawl.Topics{Control: f.env.Config.Crawl.ControlTopic, Data: f.env.Config.Crawl.DataTopic}
	recs, err := crawler.Crawl{OriginalTaskID: id, Tweets: 1, DupRate: 1}.Records(topics)
	if err != nil {
		f.t.Fatal(err)
	}
	recs = append(recs[1:], // no TASK_INIT: it would start the task's workflow without a crawler
		&kgo.Record{Topic: topics.Data, Value: fmt.Appendf(nil, `{"original_task_id": %d, "tweet_data": `, id)},
		&kgo.Record{Topic: topics.Data, Value: []byte(`{"tweet_data": {"id": "1"}}`)})
	if err := f.env.Platform.Kafka.ProduceSync(f.env.Context(), recs...).FirstErr(); err != nil {
		f.t.Fatal(err)
	}
	store := countscript.FromPlatform(f.env.Platform)
	e2e.Eventually(f.t, 30*time.Second, "the consumer to count task "+strconv.FormatInt(id, 10), func() bool {
		p, err := store.Get(f.env.Context(), id)
		return err == nil && p.ProcessedTweets == 1 && p.DuplicateTweets == 1 && p.DeadLetteredRecords == 1
	})
}

// apply submits an entry task through POST /api/workflows/apply and returns its id.
func (f *consoleFixture) apply(chat, text string) string {
	f.t.Helper()
	r := apiCall(f.t, f.env, http.MethodPost, "/api/workflows/apply", map[string]any{
		"workflowId": f.pipeline, "userText": text, "historyChunks": []string{},
		"coreEnvelope": map[string]any{"metadata": map[string]any{"chat_id": chat}},
		"telemetry":    map[string]any{"channel": "http", "requestId": testenv.Unique("req-")},
	})
	return r.Map(f.t)["taskId"].(string)
}

// entryStatus is the task's status as GET /api/workflows/tasks/{id} reports it.
func (f *consoleFixture) entryStatus(id string) string {
	f.t.Helper()
	s, _ := apiCall(f.t, f.env, http.MethodGet, "/api/workflows/tasks/"+id, nil).Map(f.t)["status"].(string)
	return s
}

func (f *consoleFixture) waitEntry(id, status string) {
	f.t.Helper()
	e2e.Eventually(f.t, 40*time.Second, "entry task "+id+" to be "+status, func() bool { return f.entryStatus(id) == status })
}

// sessionFor signs a UI account in directly through the stores and returns the session's
// cookie value and CSRF token.
func sessionFor(t *testing.T, env *e2e.Env, usr uisession.User) (token, csrf string) {
	t.Helper()
	sess, token, err := uisession.NewSessions(env.Platform.Mongo, time.Hour).Create(env.Context(), usr)
	if err != nil {
		t.Fatal(err)
	}
	return token, sess.CSRF
}

// shot saves a 1280×900 screenshot of the browser's viewport as name.png into
// $TASKLOOM_UI_SCREENSHOTS (what `make screenshots` sets); without it nothing is written.
func (b *browser) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("TASKLOOM_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 900))
	var png []byte
	if err == nil {
		png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
}
