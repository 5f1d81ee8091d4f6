package embeddedmongo

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// FerretDB v1 builds a SQLite index for every MongoDB index, but it never queries one: the only
// filter it pushes down to SQLite is a lone _id (idIndexer gives that its index), every other
// filter and every sort runs in Go over a full scan. A non-unique index is therefore pure cost
// to the stand-in — each insert adds an entry, and each update, which rewrites the whole JSON
// document, deletes and re-adds the document's entry in every index of the collection: with the
// echo tasks collection's 14 non-unique indexes, about half of what a guarded update statement
// cost (measured on the 2-core dev VM: 2.3 ms a statement, 1.0 with the indexes emptied).
// emptySecondaryIndexes replaces each such index with one of the same name and keys that holds
// no rows (a partial index WHERE 0), which SQLite leaves alone on writes. FerretDB's own record
// of the indexes is untouched, so listIndexes answers as before, and dropIndexes still finds an
// index of that name to drop. Unique indexes stay as they are: they enforce unique keys, a
// guarantee MongoDB gives and taskloom relies on.

// emptyIndexWhere ends the definition of an index that holds no rows.
const emptyIndexWhere = " WHERE 0"

// emptySecondaryIndexes empties the non-unique indexes FerretDB made on table, other than the
// _id index idIndexer adds and keyLookup's.
func emptySecondaryIndexes(ctx context.Context, db *sql.DB, table string) error {
	defs, err := secondaryIndexes(ctx, db, table)
	if err != nil {
		return err
	}
	for name, def := range defs {
		if err := replaceIndex(ctx, db, name, def+emptyIndexWhere); err != nil {
			return err
		}
	}
	return nil
}

// secondaryIndexes returns the CREATE INDEX statements of table's non-unique indexes that are
// neither empty already nor idIndexer's, by index name.
func secondaryIndexes(ctx context.Context, db *sql.DB, table string) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`, table)
	if err != nil {
		return nil, fmt.Errorf("list indexes of %s: %w", table, err)
	}
	defer rows.Close()
	defs := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, fmt.Errorf("list indexes of %s: %w", table, err)
		}
		if strings.HasPrefix(def, "CREATE UNIQUE ") || strings.HasSuffix(def, emptyIndexWhere) || strings.HasSuffix(name, idIndexSuffix) || strings.HasSuffix(name, keyIndexSuffix) {
			continue
		}
		defs[name] = def
	}
	return defs, rows.Err()
}

// replaceIndex drops index name and creates it by def, in one transaction so that no reader
// sees the collection without it.
func replaceIndex(ctx context.Context, db *sql.DB, name, def string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("empty index %s: %w", name, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`DROP INDEX %q`, name)); err != nil {
		return fmt.Errorf("empty index %s: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, def); err != nil {
		return fmt.Errorf("empty index %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("empty index %s: %w", name, err)
	}
	return nil
}
