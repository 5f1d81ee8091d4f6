package ui

import (
	"errors"
	"net/http"

	"github.com/taskloom/taskloom/api/httpx"
	"github.com/taskloom/taskloom/internal/auth"
	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/taskecho"
	"github.com/taskloom/taskloom/internal/uisession"
)

// plainError turns an error from a store or the echo service into a sentence for the page. The
// service's own messages are already written for people (TaskEcho's wording); infrastructure
// failures become advice instead of driver text.
func plainError(err error) string {
	var de *taskecho.Error
	var ve *taskecho.ValidationError
	switch {
	case errors.As(err, &ve):
		if len(ve.Errors) > 0 {
			return "输入有误：" + ve.Errors[0].Reason
		}
		return "输入有误：" + ve.Message
	case errors.As(err, &de):
		return de.Message
	case errors.Is(err, auth.ErrNotFound):
		return "API Key 不存在"
	case errors.Is(err, uisession.ErrAlreadyInitialized), errors.Is(err, uisession.ErrBadCredentials),
		errors.Is(err, uisession.ErrUsernameTaken):
		return err.Error()
	case errors.Is(err, entry.ErrNotSuspended):
		return "任务当前不在等待人工处理的状态（可能已被恢复或放弃），请刷新页面。"
	case errors.Is(err, entry.ErrNotFound), errors.Is(err, pipeline.ErrNotFound):
		return "任务不存在"
	case httpx.IsUnavailable(err):
		return "数据库暂时无法访问，请稍后重试。"
	}
	var he *httpx.Error
	if errors.As(err, &he) {
		return he.Message
	}
	return "操作失败：服务器内部错误，详情见服务端日志。"
}

func statusOf(err error) int {
	var de *taskecho.Error
	switch {
	case errors.As(err, &de):
		return de.Kind.Row().HTTPStatus
	case errors.Is(err, entry.ErrNotFound), errors.Is(err, pipeline.ErrNotFound):
		return http.StatusNotFound
	case httpx.IsUnavailable(err):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
