package capturedb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// captureDB writes a capture database the way the capture side would and returns its path.
func captureDB(t *testing.T, schema string, rows ...[]any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "capture.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		marks := strings.TrimSuffix(strings.Repeat("?,", len(r)), ",")
		if _, err := db.Exec("INSERT INTO capture_records VALUES ("+marks+")", r...); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestRecordsByTaskIDs(t *testing.T) {
	ctx := context.Background()
	path := captureDB(t, `CREATE TABLE capture_records (task_id INTEGER, url TEXT, views INTEGER, raw BLOB)`,
		[]any{101, "https://a/1", 10, []byte(`{"k":1}`)},
		[]any{102, "https://b/1", 20, nil},
		[]any{101, "https://a/2", 11, nil},
		[]any{999, "https://other", 0, nil},
	)
	src, err := Open(ctx, path, "capture_records", "task_id")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// TaskIDs order first, then the table's row order; an id with no rows adds nothing; a
	// repeated id is not read twice.
	recs, err := src.ByTaskIDs(ctx, []string{"102", "101", "404", "102"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprint(r["task_id"], " ", r["url"], " ", r["views"]))
	}
	want := []string{"102 https://b/1 20", "101 https://a/1 10", "101 https://a/2 11"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("records %v, want %v", got, want)
	}
	if recs[1]["raw"] != `{"k":1}` || recs[0]["raw"] != nil {
		t.Fatalf("blob and NULL columns: %#v / %#v", recs[1]["raw"], recs[0]["raw"])
	}
	if empty, err := src.ByTaskIDs(ctx, nil); err != nil || len(empty) != 0 || empty == nil {
		t.Fatalf("no ids: %v %v, want an empty list", empty, err)
	}
}

// More ids than one query may bind are read in chunks.
func TestRecordsChunksLargeLookups(t *testing.T) {
	ctx := context.Background()
	var rows [][]any
	var ids []string
	for i := range 1200 {
		rows = append(rows, []any{fmt.Sprint(i), i})
		ids = append(ids, fmt.Sprint(i))
	}
	path := captureDB(t, `CREATE TABLE capture_records (task_id TEXT, n INTEGER)`, rows...)
	src, err := Open(ctx, path, "capture_records", "task_id")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	recs, err := src.ByTaskIDs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1200 || recs[1199]["n"] != int64(1199) {
		t.Fatalf("%d records, last %v", len(recs), recs[len(recs)-1])
	}
}

// A wrong path, table or column fails at start with a message naming it; a name that is not a
// plain identifier never reaches SQL.
func TestOpenRecordsRejectsBadConfiguration(t *testing.T) {
	ctx := context.Background()
	path := captureDB(t, `CREATE TABLE capture_records (task_id TEXT)`)
	for _, c := range []struct{ path, table, col, want string }{
		{path, "nope", "task_id", `"nope"`},
		{path, "capture_records", "taskid", `"taskid"`},
		{path, `capture_records"; DROP TABLE x; --`, "task_id", "plain identifiers"},
		{filepath.Join(t.TempDir(), "missing.db"), "capture_records", "task_id", "missing.db"},
	} {
		src, err := Open(ctx, c.path, c.table, c.col)
		if err == nil {
			_ = src.Close()
			t.Errorf("%s/%s/%s opened, want an error", c.path, c.table, c.col)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %q does not name %s", err, c.want)
		}
	}
}

// The source is read-only: taskloom never writes the capture side's database.
func TestRecordsIsReadOnly(t *testing.T) {
	ctx := context.Background()
	path := captureDB(t, `CREATE TABLE capture_records (task_id TEXT)`)
	src, err := Open(ctx, path, "capture_records", "task_id")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.db.ExecContext(ctx, `INSERT INTO capture_records VALUES ('x')`); err == nil {
		t.Fatal("write through the records source succeeded, want read-only")
	}
}
