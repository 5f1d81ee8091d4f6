package devstack

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
)

// StartFerretDB runs an embedded FerretDB (SQLite handler, files under dir) behind the write
// serializer on addr and returns its MongoDB URI once it answers a ping. Cancelling ctx stops
// it; done is closed after.
func StartFerretDB(ctx context.Context, addr, dir string, log *slog.Logger) (uri string, done <-chan struct{}, err error) {
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
	inner, err := FreeAddr()
	if err != nil {
		_ = ln.Close()
		return "", nil, err
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: inner},
		Handler:   "sqlite",
		SQLiteURL: "file:" + abs + "/",
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
