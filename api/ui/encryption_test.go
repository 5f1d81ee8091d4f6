package ui_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/taskloom/taskloom/api"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/codec"
	"github.com/taskloom/taskloom/internal/config"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
	"github.com/taskloom/taskloom/internal/testenv/e2e"
	"github.com/taskloom/taskloom/internal/testenv/histories"
	"github.com/taskloom/taskloom/internal/uisession"
	pipelinewf "github.com/taskloom/taskloom/workflows/pipeline"
)

// TestEncryptedPayloads runs a pipeline with TEMPORAL_CODEC_KEYS on, over a vendor that holds its
// answer until the test has looked: the cluster's history holds only ciphertext (every payload
// binary/encrypted, the user's text nowhere), while the operations console, reading the running
// workflow's state through its own client, shows what it waits for — and a client without the keys
// cannot read that state. The codec server decodes the history for admin keys only, answers the
// Web UI's CORS preflight, and keeps decoding after a key rotation. A worker with the keys replays
// the encrypted history; one without them cannot.
func TestEncryptedPayloads(t *testing.T) {
	oldKey, newKey := codecKey(t, "2025-01"), codecKey(t, "2025-07")
	env := e2e.New(t, func(c *config.Config) { c.Temporal.CodecKeys = oldKey })
	vendor, release := holdingVendor(t)
	name := testenv.Unique("enc_")
	store, ctx := pipelinedb.New(env.Platform.Mongo), env.Context()
	if _, err := store.PutProvider(ctx, &pipeline.Provider{Ref: name + "_vendor", BaseURL: vendor.URL}); err != nil {
		t.Fatal(err)
	}
	def := &pipeline.Definition{Name: name, Version: "1.0.0", Schema: pipeline.Schema{Steps: []pipeline.Step{{
		Name: "reply", Type: pipeline.StepSyncAPI, ProviderRef: name + "_vendor", Endpoint: "/reply",
		InputMapping: map[string]any{"text": "${input_data.user_text}"}, OutputMapping: map[string]string{"text": "$.reply"},
		TimeoutSeconds: 60,
	}}}}
	if _, _, err := store.PublishSchema(ctx, def); err != nil {
		t.Fatal(err)
	}
	if _, err := store.SetQuota(ctx, "enc-user", "enc", 10); err != nil {
		t.Fatal(err)
	}
	const secret = "my card number is 4111 1111"
	r := apiCall(t, env, http.MethodPost, "/api/v1/pipeline-tasks", map[string]any{
		"pipeline": name, "user_id": "enc-user", "feature_id": "enc", "input_data": map[string]any{"user_text": secret}})
	taskID, _ := r.Map(t)["task_id"].(string)
	wfID := pipelinewf.WorkflowID(taskID)

	// The console decodes the running workflow's state itself.
	usr, err := uisession.NewUsers(env.Platform.Mongo).Init(ctx, adminUser, adminPass)
	if err != nil {
		t.Fatal(err)
	}
	session, _ := sessionFor(t, env, usr)
	var row string
	e2e.Eventually(t, 30*time.Second, "the console to show what the task waits for", func() bool {
		page, _ := io.ReadAll(getPage(t, env.API.URL, "/ui/console/pipelines?pipeline="+name, session).Body)
		_, row, _ = strings.Cut(html.UnescapeString(string(page)), `data-task="`+taskID+`"`)
		row, _, _ = strings.Cut(row, "</tr>")
		return strings.Contains(row, "waiting-detail") && strings.Contains(row, name+"_vendor")
	})
	_, plain := testenv.Temporal(t)
	v, err := plain.QueryWorkflow(ctx, wfID, "", pipelinewf.QueryState)
	if err != nil {
		t.Fatalf("query without the keys: %v", err)
	}
	var state map[string]any
	if err := v.Get(&state); err == nil {
		t.Fatalf("a client without TEMPORAL_CODEC_KEYS read the state: %v", state)
	}

	release()
	e2e.Eventually(t, 30*time.Second, "the task to succeed", func() bool {
		return apiCall(t, env, http.MethodGet, "/api/v1/pipeline-tasks/"+taskID, nil).Map(t)["status"] == "success"
	})
	hist := historyOf(t, env.Platform.Temporal, wfID)
	payloads := dataPayloads(hist)
	if len(payloads) < 4 {
		t.Fatalf("history holds %d payloads; want the input, activity inputs and results, the output", len(payloads))
	}
	for _, p := range payloads {
		if enc := string(p.GetMetadata()[converter.MetadataEncoding]); enc != codec.Encoding {
			t.Fatalf("a payload of the history has encoding %q: %s", enc, p.GetData())
		}
	}
	raw, _ := protojson.Marshal(hist)
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString([]byte(secret))[:12])) {
		t.Fatal("the user's text is in the history in plain")
	}
	input := hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()

	checkCodecServer(t, env, oldKey, newKey, input, secret)

	register := func(r sdkworker.Registry) { pipelinewf.Register(r, nil) }
	ring, _ := codec.FromSpec(oldKey)
	if err := histories.NewReplayerWith(t, register, codec.DataConverter(ring)).ReplayWorkflowHistory(nil, hist); err != nil {
		t.Fatalf("a worker with the keys does not replay the encrypted history: %v", err)
	}
	if err := histories.NewReplayer(t, register).ReplayWorkflowHistory(nil, hist); err == nil {
		t.Fatal("a worker without the keys replayed the encrypted history")
	}
}

// checkCodecServer decodes input (encrypted with oldKey) through codec servers over several key
// rings, and checks who may call them.
func checkCodecServer(t *testing.T, env *e2e.Env, oldKey, newKey string, input []*commonpb.Payload, secret string) {
	t.Helper()
	serve := func(spec string) string {
		ring, err := codec.FromSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(api.NewCodecServer(env.Platform, ring))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	body, _ := protojson.Marshal(&commonpb.Payloads{Payloads: input})
	post := func(url, path, key string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Namespace", env.Config.Temporal.Namespace)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	decoded := func(b []byte) string {
		var out commonpb.Payloads
		if err := protojson.Unmarshal(b, &out); err != nil || len(out.GetPayloads()) != len(input) {
			t.Fatalf("decode answer %s: %v", b, err)
		}
		return string(out.GetPayloads()[0].GetMetadata()[converter.MetadataEncoding]) + " " + string(out.GetPayloads()[0].GetData())
	}

	current := serve(oldKey)
	if status, b := post(current, "/decode", env.AdminKey); status != http.StatusOK || !strings.Contains(decoded(b), secret) ||
		!strings.HasPrefix(decoded(b), "json/plain") {
		t.Fatalf("/decode with an admin key: %d %s", status, b)
	}
	// The payload the CLI encodes with /encode decodes back.
	if status, b := post(current, "/encode", env.AdminKey); status != http.StatusOK || !strings.HasPrefix(decoded(b), codec.Encoding) {
		t.Fatalf("/encode: %d %s", status, b)
	}
	for key, want := range map[string]int{"": http.StatusUnauthorized, "not-a-key": http.StatusUnauthorized,
		env.NewKey(auth.PermWrite, ""): http.StatusForbidden} {
		status, b := post(current, "/decode", key)
		var envelope struct {
			Success bool
			Error   struct{ Code string }
		}
		if status != want || json.Unmarshal(b, &envelope) != nil || envelope.Success || envelope.Error.Code == "" {
			t.Errorf("/decode with key %q: %d %s, want %d in the error envelope", key, status, b, want)
		}
	}
	checkCORS(t, current, "http://localhost:8233", true) // TEMPORAL_UI_URL's origin by default
	checkCORS(t, current, "https://evil.example.com", false)

	// After a rotation (the new key first) the old key's payloads still decode; without the old key
	// they fail with an error naming it.
	if status, b := post(serve(newKey+","+oldKey), "/decode", env.AdminKey); status != http.StatusOK || !strings.Contains(decoded(b), secret) {
		t.Fatalf("/decode after rotation: %d %s", status, b)
	}
	if status, b := post(serve(newKey), "/decode", env.AdminKey); status != http.StatusBadRequest || !strings.Contains(string(b), `"2025-01"`) {
		t.Fatalf("/decode without the old key: %d %s", status, b)
	}
}

// checkCORS sends the preflight a browser on origin sends before /decode.
func checkCORS(t *testing.T, url, origin string, allowed bool) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodOptions, url+"/decode", nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", http.MethodPost)
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-namespace")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := resp.Header.Get("Access-Control-Allow-Origin")
	if allowed && (got != origin || !strings.Contains(strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "authorization")) {
		t.Errorf("preflight from %s: %d, Allow-Origin %q, Allow-Headers %q", origin, resp.StatusCode, got, resp.Header.Get("Access-Control-Allow-Headers"))
	}
	if !allowed && got != "" {
		t.Errorf("preflight from %s is allowed: %q", origin, got)
	}
}

// codecKey is a TEMPORAL_CODEC_KEYS entry with a fresh key.
func codecKey(t *testing.T, id string) string {
	t.Helper()
	secret := make([]byte, codec.KeySize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	return id + ":" + base64.StdEncoding.EncodeToString(secret)
}

// holdingVendor echoes POST /reply's text once release is called (or the test ends).
func holdingVendor(t *testing.T) (*httptest.Server, func()) {
	hold := make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Text string `json:"text"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"reply": "echo: " + in.Text})
	}))
	t.Cleanup(func() { release(); srv.Close() })
	return srv, release
}

func historyOf(t *testing.T, c client.Client, workflowID string) *historypb.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

// dataPayloads is every payload in m that the data converter wrote: all but search attributes,
// which the server indexes and the SDK therefore never encodes.
func dataPayloads(m proto.Message) []*commonpb.Payload {
	var out []*commonpb.Payload
	var walk func(protoreflect.Message)
	walk = func(msg protoreflect.Message) {
		if p, ok := msg.Interface().(*commonpb.Payload); ok {
			out = append(out, p)
			return
		}
		if _, ok := msg.Interface().(*commonpb.SearchAttributes); ok {
			return
		}
		msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := 0; i < v.List().Len(); i++ {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					walk(mv.Message())
					return true
				})
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(m.ProtoReflect())
	return out
}
