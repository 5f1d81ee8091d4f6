package webhook

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/feishu"
	"github.com/taskloom/taskloom/internal/webhook"
	"github.com/taskloom/taskloom/internal/webhook/bitable"
	webhookwf "github.com/taskloom/taskloom/workflows/webhook"
)

// recoverSample bounds the record ids a dry run lists.
const recoverSample = 20

// recoverReq is POST /api/v1/webhook/recover; the times are RFC 3339, until defaults to now.
type recoverReq struct {
	Since  string `json:"since"`
	Until  string `json:"until"`
	DryRun bool   `json:"dry_run"`
}

func (r recoverReq) window(now time.Time) (since, until time.Time, err error) {
	if r.Since == "" {
		return since, until, httpx.Validation("since", `field "since" is required (an RFC 3339 time such as 2026-01-02T15:04:05Z)`)
	}
	if since, err = time.Parse(time.RFC3339, r.Since); err != nil {
		return since, until, httpx.Validation("since", `field "since" must be an RFC 3339 time such as 2026-01-02T15:04:05Z`)
	}
	until = now
	if r.Until != "" {
		if until, err = time.Parse(time.RFC3339, r.Until); err != nil {
			return since, until, httpx.Validation("until", `field "until" must be an RFC 3339 time such as 2026-01-02T15:04:05Z`)
		}
	}
	if !until.After(since) {
		return since, until, httpx.Validation("until", `field "until" must be after since`)
	}
	return since.UTC(), until.UTC(), nil
}

// recover re-delivers the result rows that ended failed or error with EndAt in [since, until)
// (docs/operations.md "Redrive"). With dry_run: 200 with the count and a sample of record ids, read from the
// table and nothing started. Without: 202 with the recover run's workflow ID; the run (ID from
// the Idempotency-Key, else from the range) writes each row back to pending and ensures its
// delivery workflow. The same request again answers 200 with the same run and starts nothing.
func (h *handlers) recover(c echo.Context) error {
	var req recoverReq
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	since, until, err := req.window(time.Now().UTC().Truncate(time.Second))
	if err != nil {
		return err
	}
	key, err := httpx.IdempotencyKey(c) // names a recover run: a repeated request finds the same one
	if err != nil {
		return err
	}
	cfg := h.d.Platform.Config
	if h.feishu == nil || cfg.Webhook.TaskBitableURL == "" || cfg.Webhook.WebhookBitableURL == "" {
		return httpx.Unavailable("feishu", time.Minute)
	}
	ctx := c.Request().Context()
	if req.DryRun {
		t, err := bitable.Open(ctx, h.feishu, webhookwf.TargetFrom(cfg.Webhook).URLs, webhook.FieldNamesFrom(cfg.Webhook))
		if err != nil {
			return httpx.Unavailable("feishu", time.Minute)
		}
		rows, err := t.RecoverRows(ctx, since, until)
		if err != nil {
			if feishu.IsRetryable(err) {
				return httpx.Unavailable("feishu", 5*time.Second)
			}
			return httpx.Unavailable("feishu", 30*time.Second)
		}
		sample := []string{}
		for _, r := range rows[:min(len(rows), recoverSample)] {
			sample = append(sample, r.RecordID)
		}
		return c.JSON(http.StatusOK, map[string]any{"dry_run": true, "count": len(rows), "sample": sample,
			"since": since, "until": until})
	}
	keyID := ""
	if who := auth.From(c); who != nil {
		keyID = who.KeyID
	}
	id := webhookwf.RecoverID(keyID, key, since, until)
	created, err := webhookwf.StartRecover(ctx, h.d.Platform.Temporal, cfg.Temporal.TaskQueue, id,
		webhookwf.RecoverInputFor(cfg.Webhook, since, until))
	if err != nil {
		return httpx.FromTemporal(fmt.Errorf("webhook recover: %w", err))
	}
	status := http.StatusOK
	if created {
		status = http.StatusAccepted
	}
	return c.JSON(status, map[string]any{"workflow_id": id, "created": created, "since": since, "until": until})
}
