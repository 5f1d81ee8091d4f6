// Command embedded-mongo runs taskloom's embedded FerretDB in its own process. The test harness
// starts it so the database is not slowed by the race detector of the tests that use it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/taskloom/taskloom/internal/devstack/embeddedmongo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:27017", "listen address")
	dir := flag.String("dir", ".data/mongo", "SQLite data directory")
	watchStdin := flag.Bool("exit-on-stdin-eof", false, "stop when standard input closes: the parent "+
		"holds its write end, so a parent that dies without cleaning up (a test binary killed by "+
		"its timeout) does not leave the database running")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *watchStdin {
		go func() { _, _ = io.Copy(io.Discard, os.Stdin); stop() }()
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	uri, done, err := embeddedmongo.Start(ctx, *addr, *dir, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded-mongo:", err)
		os.Exit(1)
	}
	fmt.Println(uri)
	<-ctx.Done()
	// FerretDB finishes the queries it is running before it stops, and a scan of a big
	// collection can take minutes; a stopped test run must not leave it burning a core.
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		fmt.Fprintln(os.Stderr, "embedded-mongo: queries still running after", shutdownGrace, "- exiting")
		os.Exit(1)
	}
}

const shutdownGrace = 5 * time.Second
