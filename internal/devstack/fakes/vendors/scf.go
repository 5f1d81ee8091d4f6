package vendors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
)

// invocation is what the backend sends to an SCF function.
type invocation struct {
	TaskID      string         `json:"task_id"`
	StepIndex   int            `json:"step_index"`
	Input       map[string]any `json:"input"`
	CallbackURL string         `json:"callback_url"`
}

// serveSCF accepts an invocation at once (SCF is asynchronous) and calls back later.
func (s *Server) serveSCF(w http.ResponseWriter, r *http.Request, function string) {
	s.count("scf", function)
	if function != SCFCompositor || r.Method != http.MethodPost {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such function: " + function})
		return
	}
	var inv invocation
	if err := json.NewDecoder(r.Body).Decode(&inv); err != nil || inv.TaskID == "" || inv.CallbackURL == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "need task_id, step_index, input, callback_url"})
		return
	}
	body := map[string]any{"status": "success", "error_message": nil, "output": map[string]any{
		"video_url":   fmt.Sprintf("https://fake-cos.example/scf/%s/%s-%d.mp4", function, inv.TaskID, inv.StepIndex),
		"image_count": countOf(inv.Input["image_urls"]),
		"template":    inv.Input["template"],
	}}
	if s.mode("scf") == ModeFail {
		body = map[string]any{"status": "failed", "output": nil, "error_message": "video render failed (fake)"}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-time.After(s.opts.CallbackDelay):
			s.sendCallback(inv, body)
		case <-s.quit:
		}
	}()
	writeJSON(w, http.StatusAccepted, map[string]any{"accepted": true, "request_id": inv.TaskID + "-" + strconv.Itoa(inv.StepIndex)})
}

// sendCallback posts the result with both the v1 signature and the body signature, retrying
// a few times on transport errors and 5xx like a real function would.
func (s *Server) sendCallback(inv invocation, body map[string]any) {
	raw, _ := json.Marshal(body)
	step := strconv.Itoa(inv.StepIndex)
	res := CallbackResult{TaskID: inv.TaskID, StepIndex: inv.StepIndex}
	for attempt := 0; attempt < 3; attempt++ {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req, err := http.NewRequest(http.MethodPost, inv.CallbackURL, bytes.NewReader(raw))
		if err != nil {
			res.Err = err.Error()
			break
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(pipeline.HeaderTimestamp, ts)
		req.Header.Set(pipeline.HeaderSignature, pipeline.SignV1(s.opts.Secret, inv.TaskID, step, ts))
		req.Header.Set(pipeline.HeaderSignature256, pipeline.SignV2(s.opts.Secret, inv.TaskID, step, ts, raw))
		resp, err := s.http.Do(req)
		if err != nil {
			res.Err = err.Error()
			time.Sleep(200 * time.Millisecond)
			continue
		}
		_ = resp.Body.Close()
		res.Status, res.Err = resp.StatusCode, ""
		if resp.StatusCode < 500 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.mu.Lock()
	s.callbacks = append(s.callbacks, res)
	s.mu.Unlock()
}

func countOf(v any) int {
	if a, ok := v.([]any); ok {
		return len(a)
	}
	return 0
}
