package embeddedmongo

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // FerretDB's own SQLite driver
)

// FerretDB v1's SQLite backend finds a document by _id with the expression
// _ferretdb_sjson->'$._id' (every update, delete and findAndModify goes through that lookup),
// but it builds the collection's unique _id index on _ferretdb_sjson->"_id". SQLite uses an
// expression index only for an identical expression, so EXPLAIN QUERY PLAN shows a full SCAN,
// parsing every document's JSON, for each of those lookups: writing n documents one by one
// costs O(n²). idIndexer adds an index on the expression FerretDB really queries, once per
// collection, which turns the lookup into an index SEARCH. Like writeSerializer, it exists
// only for the embedded database; MongoDB needs none of it.

// idIndexSuffix ends the added index's name, after the table's. FerretDB names its own indexes
// table + "_" + the MongoDB index name, and no taskloom index is named "_taskloom_id_expr".
const idIndexSuffix = "__taskloom_id_expr"

// idIndexer remembers the collections it has indexed. It is only called with the write
// serializer's lock held, which guards done and ensures no FerretDB write runs while it changes
// a schema.
type idIndexer struct {
	dir  string // FerretDB's SQLite directory: one <database>.sqlite file per database
	log  *slog.Logger
	done map[string]bool // database + "." + collection
	keys *keyLookup      // told of each indexed collection's unique keys
}

// sqliteDSN is the DSN of database's SQLite file in FerretDB's directory dir, opened in mode
// (rw, ro) with FerretDB's busy timeout.
func sqliteDSN(dir, database, mode string) string {
	return "file:" + filepath.Join(dir, database+".sqlite") + "?mode=" + mode + "&_pragma=" + url.QueryEscape("busy_timeout(10000)")
}

func newIDIndexer(dir string, log *slog.Logger) *idIndexer {
	return &idIndexer{dir: dir, log: log, done: map[string]bool{}, keys: newKeyLookup(dir)}
}

// after is told of every write command once FerretDB has answered it.
func (x *idIndexer) after(cmd command) {
	if cmd.db == "" {
		return
	}
	switch cmd.name {
	case "drop", "dropDatabase", "renameCollection":
		// The tables behind these names are gone or renamed; index again on the next write.
		for k := range x.done {
			if strings.HasPrefix(k, cmd.db+".") {
				delete(x.done, k)
			}
		}
		x.keys.forget(cmd.db, cmd.name == "dropDatabase")
	case "insert", "update", "delete", "findAndModify", "findandmodify", "create", "createIndexes":
		key := cmd.db + "." + cmd.collection
		// createIndexes may have added indexes that empty() has to empty.
		if cmd.collection == "" || (x.done[key] && cmd.name != "createIndexes") {
			return
		}
		ok, err := x.ensure(cmd.db, cmd.collection)
		if err != nil {
			x.log.Error("embedded mongo: index _id lookups", "collection", key, "err", err)
		}
		x.done[key] = ok
	}
}

// ensure creates the index on collection's table and empties its secondary indexes (see
// emptySecondaryIndexes). It reports false, without error, when the
// collection does not exist (the command that named it failed).
func (x *idIndexer) ensure(database, collection string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// mode=rw: never create the database file of a command that failed.
	db, err := sql.Open("sqlite", sqliteDSN(x.dir, database, "rw"))
	if err != nil {
		return false, fmt.Errorf("open %s: %w", database, err)
	}
	defer db.Close()
	var table string
	err = db.QueryRowContext(ctx, `SELECT table_name FROM "_ferretdb_collections" WHERE name = ?`, collection).Scan(&table)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		if strings.Contains(err.Error(), "unable to open database file") {
			return false, nil
		}
		return false, fmt.Errorf("find table of %s: %w", collection, err)
	}
	q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, table+idIndexSuffix, table)
	if _, err := db.ExecContext(ctx, q); err != nil {
		return false, fmt.Errorf("index %s: %w", table, err)
	}
	if err := emptySecondaryIndexes(ctx, db, table); err != nil {
		return false, err
	}
	if err := x.keys.index(ctx, db, database, collection, table); err != nil {
		return false, err
	}
	return true, nil
}
