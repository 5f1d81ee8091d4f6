package telegram

import (
	"encoding/json"
	"net/http"
)

// AssistantPath is the dev stack's stand-in for the conversational backend a Telegram bot's
// pipeline calls: POST {AssistantPath}/reply with {"text", "history"} answers
// {"reply": "You said: <text>", "history_len": n}. `make dev` registers it as the provider of the
// demo pipeline entry_echo, so a message to the fake bot gets an answer end to end.
const AssistantPath = "/_assistant"

func (s *Server) serveAssistant(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != AssistantPath+"/reply" {
		apiError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	var in struct {
		Text    string `json:"text"`
		History []any  `json:"history"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Text == "" {
		apiError(w, http.StatusBadRequest, "Bad Request: text is required", nil)
		return
	}
	reply(w, http.StatusOK, map[string]any{"reply": "You said: " + in.Text, "history_len": len(in.History)})
}
