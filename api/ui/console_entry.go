package ui

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/taskloom/taskloom/internal/entry"
	"github.com/taskloom/taskloom/internal/entry/intake"
)

// suspendedShown bounds the entry page's list of suspended tasks; the page says how many more
// there are (the count is one visibility call).
const suspendedShown = 100

type entryData struct {
	Stats     *intake.Stats
	Channels  []channelRow
	Suspended []intake.SuspendedTask
	Total     int64
	More      int64
	// FailedReplies are Telegram tasks whose reply was refused or given up; MoreReplies how
	// many more there are than the page lists.
	FailedReplies []intake.FailedReply
	MoreReplies   int64
	Admin         bool
	Links         map[string]string
}

type channelRow struct {
	Channel     string
	Total, Open int64
}

// entryPage shows the entry tasks' counts by status and channel, the suspended tasks with
// their reason and attempts (an administrator gets resume and drop next to each), and the
// Telegram tasks whose reply was refused or given up, with Telegram's error.
func (u *UI) entryPage(c echo.Context) error {
	ctx := c.Request().Context()
	st, err := u.entry.Stats(ctx, u.p.Config.Entry.SuspendedAlertThreshold)
	if err != nil {
		return u.failPage(c, err)
	}
	d := entryData{Stats: st, Admin: sessionFrom(c).Admin(), Links: map[string]string{}}
	for _, ch := range entry.Channels {
		d.Channels = append(d.Channels, channelRow{Channel: ch, Total: st.Channels[ch].Total, Open: st.Channels[ch].Open})
	}
	if d.Suspended, err = u.entry.Suspended(ctx, suspendedShown); err != nil {
		return u.failPage(c, err)
	}
	d.Total = st.Counts[entry.StatusSuspended]
	d.More = max(0, d.Total-int64(len(d.Suspended)))
	for _, s := range d.Suspended {
		d.Links[s.TaskID] = u.temporalLink(s.TaskID)
	}
	if st.Replies.Failed > 0 {
		if d.FailedReplies, err = u.entry.FailedReplies(ctx, suspendedShown); err != nil {
			return u.failPage(c, err)
		}
		d.MoreReplies = max(0, st.Replies.Failed-int64(len(d.FailedReplies)))
	}
	for _, f := range d.FailedReplies {
		d.Links[f.TaskID] = u.temporalLink(f.TaskID)
	}
	return u.render(c, http.StatusOK, "console_entry.html", "入口任务", "entry", d)
}

// resumeEntry and dropEntry send the same signal through the same intake.Tasks methods as
// POST /internal/tasks/{id}/resume|drop, recording the signed-in user as the operator.
func (u *UI) resumeEntry(c echo.Context) error { return u.signalEntry(c, true) }
func (u *UI) dropEntry(c echo.Context) error   { return u.signalEntry(c, false) }

func (u *UI) signalEntry(c echo.Context, resume bool) error {
	const target = "/ui/console/entry"
	id := c.Param("id")
	if !entry.ValidTaskID(id) {
		return back(c, target, "error", "无效的任务 ID")
	}
	p := entry.SignalPayload{Operator: actor(c).Name, Reason: strings.TrimSpace(c.FormValue("reason"))}
	act, verb := u.entry.Drop, "已放弃"
	if resume {
		act, verb = u.entry.Resume, "已恢复"
	}
	if _, err := act(c.Request().Context(), id, p); err != nil {
		return u.done(c, target, err, "")
	}
	return back(c, target, "ok", verb+"任务 "+id+"（状态稍后刷新可见）")
}
