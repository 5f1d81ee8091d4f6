// Package capturedb reads capture records from a local SQLite database (WEBHOOK_RECORDS_SQLITE):
// when it is set, piracy_general_search records come from it rather than the Feishu capture table.
package capturedb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	_ "modernc.org/sqlite" // pure Go: no cgo in the build
)

// Records reads capture records from a local SQLite database, which piracy_general_search
// payloads take their records from in preference to the Feishu capture result table. Every
// column of a row becomes a field of the record, so the capture side's own schema passes
// through unchanged.
// The database is opened read-only; the capture process owns it.
type Records struct {
	db     *sql.DB
	table  string
	taskID string
}

// sqliteIdent is what a configured table or column name may be: it is spliced into the query.
var sqliteIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// sqliteChunk keeps one query well under SQLite's bound-parameter limit.
const sqliteChunk = 500

// Open opens path read-only and checks that table has the taskIDColumn.
func Open(ctx context.Context, path, table, taskIDColumn string) (*Records, error) {
	if !sqliteIdent.MatchString(table) || !sqliteIdent.MatchString(taskIDColumn) {
		return nil, fmt.Errorf("sqlite records: table %q and column %q must be plain identifiers", table, taskIDColumn)
	}
	dsn := (&url.URL{Scheme: "file", Opaque: path, RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite records %s: %w", path, err)
	}
	if err := hasColumn(ctx, db, table, taskIDColumn); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite records %s: %w", path, err)
	}
	return &Records{db: db, table: table, taskID: taskIDColumn}, nil
}

// hasColumn checks the schema up front. (A probe query would not do: SQLite reads a quoted
// name that matches no column as a string literal.)
func hasColumn(ctx context.Context, db *sql.DB, table, column string) error {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return fmt.Errorf("read the schema of table %q: %w", table, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return fmt.Errorf("read the schema of table %q: %w", table, err)
		}
		if name == column {
			return nil
		}
		cols = append(cols, name)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the schema of table %q: %w", table, err)
	}
	if len(cols) == 0 {
		return fmt.Errorf("no table %q", table)
	}
	return fmt.Errorf("table %q has no column %q (it has %s)", table, column, strings.Join(cols, ", "))
}

// Ping is the readiness check.
func (s *Records) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close releases the database.
func (s *Records) Close() error { return s.db.Close() }

// ByTaskIDs returns the records of every id, grouped in the order of ids and, within one id, in
// the table's row order.
func (s *Records) ByTaskIDs(ctx context.Context, ids []string) ([]map[string]any, error) {
	byID := map[string][]map[string]any{}
	for start := 0; start < len(ids); start += sqliteChunk {
		chunk := ids[start:min(start+sqliteChunk, len(ids))]
		if err := s.query(ctx, chunk, byID); err != nil {
			return nil, err
		}
	}
	out := []map[string]any{}
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, byID[id]...)
		}
	}
	return out, nil
}

func (s *Records) query(ctx context.Context, ids []string, byID map[string][]map[string]any) error {
	// The column's affinity applies to the bound text ids, so an INTEGER task_id matches too
	// (and its index is used).
	q := fmt.Sprintf(`SELECT * FROM "%s" WHERE "%s" IN (?%s)`, s.table, s.taskID,
		strings.Repeat(",?", len(ids)-1))
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("read sqlite capture records: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("read sqlite capture records: %w", err)
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("scan sqlite capture record: %w", err)
		}
		rec := make(map[string]any, len(cols))
		var id string
		for i, c := range cols {
			v := vals[i]
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			rec[c] = v
			if c == s.taskID {
				id = fmt.Sprint(v)
			}
		}
		byID[id] = append(byID[id], rec)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read sqlite capture records: %w", err)
	}
	return nil
}
