package ui

import "github.com/labstack/echo/v4"

// echoRoutes are the TaskEcho pages: projects, queues, tasks and pull management.
func (u *UI) echoRoutes(g *echo.Group) {
	g.GET("/projects/:pid", u.projectPage)
	g.POST("/projects/:pid/tasks", u.createProjectTask)

	g.GET("/projects/:pid/tasks/:tid", u.taskPage)
	g.POST("/projects/:pid/tasks/:tid/edit", u.editTask)
	g.POST("/projects/:pid/tasks/:tid/move", u.moveTask)
	g.POST("/projects/:pid/tasks/:tid/delete", u.deleteTask)
	g.POST("/projects/:pid/tasks/:tid/pull-reset", u.resetPull)
	g.POST("/projects/:pid/tasks/:tid/re-run", u.reRunTask)

	g.GET("/projects/:pid/queues/:qid", u.queuePage)
	g.POST("/projects/:pid/queues/:qid/tasks", u.createQueueTask)
	g.POST("/projects/:pid/queues/:qid/batch", u.batchAction)
	g.GET("/projects/:pid/queues/:qid/ops/:op", u.confirmQueueOp)
	g.POST("/projects/:pid/queues/:qid/ops/:op", u.runQueueOp)

	g.GET("/pulls", u.pullsPage)
	g.POST("/pulls/release", u.releasePulls)
}
