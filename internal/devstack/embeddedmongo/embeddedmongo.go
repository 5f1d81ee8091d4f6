// Package embeddedmongo is the MongoDB stand-in of the dev stack and the tests: FerretDB v1 (SQLite
// handler) in process, behind a wire proxy (proxy*.go) that serialises writes and decides a
// write's guard from one _id lookup, so single-document guarded updates, upserts and bulk writes
// keep MongoDB's documented atomicity, and that answers a find on a unique key from that one
// document (proxy_keylookup.go); sqlite_*.go tune FerretDB's SQLite (an _id index, empty
// secondary indexes FerretDB never reads). Domain code never knows it runs on this.
package embeddedmongo

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/taskloom/taskloom/internal/devstack/loopback"
)

// Start runs an embedded FerretDB (SQLite handler, files under dir) behind the write
// serializer on addr and returns its MongoDB URI once it answers a ping. Cancelling ctx stops
// it; done is closed after.
func Start(ctx context.Context, addr, dir string, log *slog.Logger) (uri string, done <-chan struct{}, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("ferretdb data dir: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", nil, fmt.Errorf("ferretdb data dir: %w", err)
	}
	// FerretDB listens on a private port; clients reach it through the write serializer on addr.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	inner, err := loopback.FreeAddr()
	if err != nil {
		_ = ln.Close()
		return "", nil, err
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: inner},
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/?" + sqlitePragmas,
		Logger:    log,
	})
	if err != nil {
		_ = ln.Close()
		return "", nil, fmt.Errorf("ferretdb on %s: %w", addr, err)
	}
	proxy := serveSerialized(ln, inner, newIDIndexer(abs, log))
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		_ = f.Run(ctx)
		proxy.close()
	}()
	uri = "mongodb://" + ln.Addr().String() + "/"
	if err := waitMongo(ctx, uri, 20*time.Second); err != nil {
		return "", nil, fmt.Errorf("ferretdb on %s did not answer: %w", addr, err)
	}
	return uri, ch, nil
}

// sqlitePragmas are set on each of FerretDB's SQLite connections, beside its own busy_timeout,
// journal_mode(wal) and auto_vacuum(none).
//
// FerretDB commits every statement of a write command as a transaction of its own, and under
// SQLite's default synchronous=FULL each commit waits for an fsync of the WAL: a guarded bulk
// write of 50 statements waited for 50 of them, one after the other under the write lock (a
// pull's claim, measured on the 2-core dev VM: 3.5 ms a statement, 2.3 without). With WAL,
// synchronous=NORMAL syncs at checkpoints instead. A commit still survives the embedded
// database's process crashing (it is in the kernel's page cache;
// TestCommittedWritesSurviveAKilledProcess) and the files stay consistent; only a crash of the
// machine itself can lose the last commits. Nothing depends on that here: the stand-in's data
// lives for a dev session or a test run, and a standalone mongod also acknowledges a default
// (w:1) write before its journal reaches the disk (it syncs the journal every 100 ms). None of
// MongoDB's guarantees taskloom relies on — per-document atomicity, statement order, unique
// keys — involves the disk.
//
// temp_store=memory keeps the statement journal of FerretDB's updates in memory: an update
// rewrites the document's entry in every index of the collection inside an explicit
// transaction, and SQLite journals those pages to a temporary file by default.
const sqlitePragmas = "_pragma=synchronous(normal)&_pragma=temp_store(memory)"

// waitMongo pings uri until it answers or timeout passes.
func waitMongo(ctx context.Context, uri string, timeout time.Duration) error {
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(500 * time.Millisecond))
	if err != nil {
		return err
	}
	defer func() { _ = c.Disconnect(context.Background()) }()
	deadline := time.Now().Add(timeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err = c.Ping(pctx, nil)
		cancel()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
