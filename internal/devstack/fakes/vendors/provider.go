package vendors

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

func (s *Server) serveProvider(w http.ResponseWriter, r *http.Request, provider, path string) {
	endpoint := path
	if strings.HasPrefix(path, "/workflow/status/") {
		endpoint = "/workflow/status"
	}
	s.count(provider, endpoint)
	switch s.mode(provider) {
	case ModeFail:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": provider + " is failing (fake)"})
		return
	case ModeSlow:
		select {
		case <-time.After(s.opts.SlowDelay):
		case <-r.Context().Done():
			return
		}
	}
	var body map[string]any
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body must be a JSON object: " + err.Error()})
			return
		}
	}
	switch {
	case endpoint == "/health" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case endpoint == "/image/process" && r.Method == http.MethodPost:
		s.imageProcess(w, provider, body)
	case endpoint == "/image/cutout" && r.Method == http.MethodPost:
		s.imageCutout(w, provider, body)
	case endpoint == "/workflow/execute" && r.Method == http.MethodPost:
		s.workflowExecute(w, provider, body)
	case endpoint == "/workflow/status" && r.Method == http.MethodGet:
		s.workflowStatus(w, provider, strings.TrimPrefix(path, "/workflow/status/"))
	case endpoint == "/video/watermark" && r.Method == http.MethodPost:
		s.videoWatermark(w, provider, body)
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such endpoint: " + r.Method + " " + path})
	}
}

func (s *Server) imageProcess(w http.ResponseWriter, provider string, body map[string]any) {
	img, ok := body["image_url"].(string)
	if !ok || img == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "image_url is required"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"code": 0,
		"data": map[string]any{"output_url": fmt.Sprintf("https://fake-cos.example/%s/processed/%s", provider, baseName(img)),
			"operations": body["operations"]},
		"metadata": map[string]any{"duration": 3.2, "provider": provider},
	})
}

func (s *Server) imageCutout(w http.ResponseWriter, provider string, body map[string]any) {
	urls, ok := body["image_urls"].([]any)
	if !ok || len(urls) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "image_urls must be a non-empty array"})
		return
	}
	results := make([]any, len(urls))
	for i, u := range urls {
		results[i] = fmt.Sprintf("https://fake-cos.example/%s/cutout/%d-%s", provider, i, baseName(fmt.Sprint(u)))
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "data": map[string]any{"results": results}})
}

func (s *Server) workflowExecute(w http.ResponseWriter, provider string, body map[string]any) {
	if _, ok := body["image_url"].(string); !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "image_url is required"})
		return
	}
	s.mu.Lock()
	s.seq++
	id := fmt.Sprintf("vh%06d", s.seq)
	s.jobs[id] = &job{provider: provider, images: 12}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"task_id": id, "status": "queued"})
}

func (s *Server) workflowStatus(w http.ResponseWriter, provider, id string) {
	s.mu.Lock()
	j, ok := s.jobs[id]
	if ok {
		j.polls++
	}
	var polls, images int
	if ok {
		polls, images = j.polls, j.images
	}
	s.mu.Unlock()
	if !ok || j.provider != provider {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown task " + id})
		return
	}
	if polls < s.opts.PollsToComplete {
		writeJSON(w, http.StatusOK, map[string]any{"task_id": id, "status": "processing", "progress": polls * 100 / s.opts.PollsToComplete})
		return
	}
	out := make([]any, images)
	for i := range out {
		out[i] = fmt.Sprintf("https://fake-cos.example/%s/pose12/%s-%02d.jpg", provider, id, i+1)
	}
	writeJSON(w, http.StatusOK, map[string]any{"task_id": id, "status": "success", "output_images": out})
}

func (s *Server) videoWatermark(w http.ResponseWriter, provider string, body map[string]any) {
	v, ok := body["video_url"].(string)
	if !ok || v == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "video_url is required"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "data": map[string]any{
		"output_url": fmt.Sprintf("https://fake-cos.example/%s/watermarked/%s", provider, baseName(v)),
		"watermark":  body["watermark_url"],
	}})
}

func baseName(u string) string {
	if i := strings.LastIndexByte(u, '/'); i >= 0 {
		return u[i+1:]
	}
	return u
}
