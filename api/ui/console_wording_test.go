package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taskloom/taskloom/internal/pipeline"
	"github.com/taskloom/taskloom/internal/pipeline/pipelinedb"
	"github.com/taskloom/taskloom/internal/testenv"
)

// The pipelines list and a task's page word the refund state from the status: a successful task
// of a refunding pipeline is not "待退款" (its eligible_for_refund is the schema's policy).
func TestConsoleWordsRefundStatesByStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := testenv.Mongo(t)
	_, e := mountUI(t, db)
	srv := httptest.NewServer(e)
	defer srv.Close()
	cookie := signIn(ctx, t, db)

	now := time.Now().UTC()
	want := map[string]string{}
	var docs []any
	for i, c := range []struct {
		status             string
		eligible, refunded bool
		label              string
	}{
		{pipeline.StatusSuccess, true, false, "不适用"},
		{pipeline.StatusProcessing, true, false, "不适用"},
		{pipeline.StatusFailed, true, false, "待退款"},
		{pipeline.StatusFailed, true, true, "已退款"},
		{pipeline.StatusFailed, false, false, "不退款"},
	} {
		id := pipeline.NewTaskID()
		want[id] = c.label
		docs = append(docs, pipeline.Task{ID: id, UserID: "u", FeatureID: "f", Pipeline: "p", Version: "1.0.0",
			InputData: map[string]any{}, Status: c.status, EligibleForRefund: c.eligible, Refunded: c.refunded,
			WorkflowID: pipeline.WorkflowID(id), CreatedAt: now.Add(time.Duration(i) * time.Second), UpdatedAt: now})
	}
	if _, err := db.Collection(pipelinedb.CollTasks).InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}

	status, page := getWithCookie(t, srv.URL+"/ui/console/pipelines", cookie)
	if status != http.StatusOK {
		t.Fatalf("pipelines page: %d %s", status, page)
	}
	for id, label := range want {
		row := regexp.MustCompile(`(?s)<tr data-task="` + id + `">.*?<td class="label refund">([^<]*)</td>`).FindStringSubmatch(page)
		if row == nil || row[1] != label {
			t.Errorf("task %s: refund cell %v, want %s", id, row, label)
		}
		status, detail := getWithCookie(t, srv.URL+"/ui/console/pipelines/"+id, cookie)
		if status != http.StatusOK || !strings.Contains(detail, `<dd id="task-refund">`+label+`</dd>`) {
			t.Errorf("task page %s: %d, want refund %s", id, status, label)
		}
	}
}

// The pull management page lists by default every pulled-but-not-pushed task its card counts.
func TestPullsPageListsWhatItsCardCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db := testenv.Mongo(t)
	p, e := mountUI(t, db)
	srv := httptest.NewServer(e)
	defer srv.Close()
	project := testenv.Unique("pulls-card-")
	seedTasks(ctx, t, db, p, project, "q1", 30)
	cookie := signIn(ctx, t, db)

	status, page := getWithCookie(t, srv.URL+"/ui/pulls?project="+project, cookie)
	if status != http.StatusOK {
		t.Fatalf("pulls page: %d %s", status, page)
	}
	card := regexp.MustCompile(`<div class="v">(\d+)</div><div class="k">已拉取未推送</div>`).FindStringSubmatch(page)
	if card == nil || card[1] == "0" {
		t.Fatalf("no pulled-not-pushed card with a count: %v", card)
	}
	if !strings.Contains(page, fmt.Sprintf(`<span class="muted small" id="pending-total">（%s 个）</span>`, card[1])) {
		t.Fatalf("the list does not hold the card's %s tasks", card[1])
	}
	if rows := strings.Count(page, `<td><input type="checkbox" name="task_ids"`); fmt.Sprint(rows) != card[1] {
		t.Fatalf("the list shows %d rows, the card counts %s", rows, card[1])
	}
}
