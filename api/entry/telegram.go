package entry

import (
	"crypto/subtle"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/entry"
)

// secretHeader is the header Telegram sends with setWebhook's secret_token.
const secretHeader = "X-Telegram-Bot-Api-Secret-Token"

// telegram is POST /telegram/webhook: check the secret token, map the Update to an envelope
// (channel telegram, key from the update id), enqueue it and answer 200 at once; the worker
// replies with sendMessage when the task completes. A redelivered update finds its first task.
// Telegram redelivers on any non-2xx, so a 503 while Temporal is down loses nothing; an update
// that runs nothing (an edit, by default) is answered 200 so that it is not redelivered.
func (h *handlers) telegram(c echo.Context) error {
	want := h.cfg.TelegramWebhookSecret
	got := c.Request().Header.Get(secretHeader)
	if want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return httpx.Unauthorized("missing or wrong " + secretHeader)
	}
	body, err := httpx.ReadBody(c)
	if err != nil {
		return err
	}
	u, err := entry.ParseUpdate(body)
	if err != nil {
		return httpx.Validation("body", err.Error())
	}
	req, keyTS, ignored := entry.MapUpdate(u, entry.TelegramIntake{Route: h.cfg.TelegramWorkflowFor, RerunEdits: h.cfg.RerunTelegramEdits()})
	if req == nil {
		return c.JSON(http.StatusOK, map[string]any{"ok": true, "ignored": true, "reason": ignored})
	}
	if err := req.Validate(); err != nil {
		// Answering non-2xx would make Telegram redeliver a message that can never pass.
		h.sub.Log.Warn("telegram update ignored", "update_id", u.UpdateID, "err", err)
		return c.JSON(http.StatusOK, map[string]any{"ok": true, "ignored": true, "reason": err.Error()})
	}
	env := req.Envelope(entry.Defaults{Channel: entry.ChannelTelegram, Source: "telegram-bot", RetryMax: h.cfg.RetryMax,
		Now: h.now(), KeyTS: keyTS, Owner: entry.OwnerTelegram})
	acc, err := h.sub.Submit(c.Request().Context(), env)
	var fe *entry.FieldError
	if errors.As(err, &fe) {
		return c.JSON(http.StatusOK, map[string]any{"ok": true, "ignored": true, "reason": fe.Error()})
	}
	if err != nil {
		return toHTTP(err)
	}
	return c.JSON(http.StatusOK, map[string]any{"ok": true, "taskId": acc.TaskID, "duplicate": acc.Duplicate})
}
