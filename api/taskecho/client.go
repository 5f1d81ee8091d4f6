package taskecho

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/taskecho"
)

// submit is POST /api/v1/submit, TaskEcho's full-queue push. ?conflict=reject (or the project's
// conflict_policy) makes a push over an unseen server edit a 409.
func (a *api) submit(c echo.Context) error {
	raw, err := httpx.ReadBody(c)
	if err != nil {
		return err
	}
	b, err := taskecho.DecodeSubmit(raw)
	if err != nil {
		return fail(err)
	}
	// TaskEcho checks a project-bound key's scope before validating the body; the check reads
	// the same decoded project_id that the push writes to.
	if err := auth.RequireProject(c, b.ProjectID); err != nil {
		return err
	}
	conflict := strings.ToLower(c.QueryParam("conflict"))
	if conflict != "" && conflict != taskecho.ConflictOverwrite && conflict != taskecho.ConflictReject {
		return httpx.Validation("conflict", "conflict 必须是 overwrite 或 reject")
	}
	in, err := b.Parse(timeNow())
	if err != nil {
		return fail(err)
	}
	res, err := a.svc.Intake.Submit(c.Request().Context(), actor(c), in, conflict)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, res, "提交成功")
}

// incremental decodes one of the three incremental-update bodies and checks the key's scope.
func incremental(c echo.Context, kind string) (*taskecho.IncrementalInput, error) {
	b, err := httpx.ReadBody(c)
	if err != nil {
		return nil, err
	}
	in, err := taskecho.ParseIncremental(kind, b)
	if err != nil {
		return nil, fail(err)
	}
	if err := auth.RequireProject(c, in.ProjectID); err != nil {
		return nil, err
	}
	return in, nil
}

func (a *api) appendMessage(c echo.Context) error {
	in, err := incremental(c, taskecho.IncMessage)
	if err != nil {
		return err
	}
	r, err := a.svc.Intake.AppendMessage(c.Request().Context(), in)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{
		"message_id": r.Index, "role": in.Role, "content": in.Content, "session_id": strOrNil(in.SessionID), "created_at": ts(r.At),
	}, "消息追加成功")
}

func (a *api) appendLog(c echo.Context) error {
	in, err := incremental(c, taskecho.IncLog)
	if err != nil {
		return err
	}
	r, err := a.svc.Intake.AppendLog(c.Request().Context(), in)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{"log_id": r.Index, "content": in.Content, "created_at": ts(r.At)}, "日志追加成功")
}

func (a *api) setStatus(c echo.Context) error {
	in, err := incremental(c, taskecho.IncStatus)
	if err != nil {
		return err
	}
	r, err := a.svc.Intake.SetStatus(c.Request().Context(), actor(c), in)
	if err != nil {
		return fail(err)
	}
	return ok(c, http.StatusOK, map[string]any{
		"task_id": in.TaskID, "status": strings.ToUpper(in.Status), "previous_status": strings.ToUpper(r.PreviousStatus),
		"updated_at": ts(r.At),
	}, "状态更新成功")
}
