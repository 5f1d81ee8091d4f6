package crawl_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/taskloom/taskloom/internal/devstack/fakes/crawler"
	"github.com/taskloom/taskloom/internal/testenv"
)

// fakeCrawlerEnv turns this test binary into the fake crawler, so the
// crawler activity runs a real subprocess (the way `dev crawl fake-crawler`
// runs under make dev) without building the dev binary.
const fakeCrawlerEnv = "TASKLOOM_TEST_FAKE_CRAWLER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeCrawlerEnv) == "1" {
		os.Exit(runFakeCrawler(os.Args[1:]))
	}
	testenv.Main(m)
}

func runFakeCrawler(args []string) int {
	var o crawler.Options
	fs := pflag.NewFlagSet("fake-crawler", pflag.ContinueOnError)
	o.Flags(fs)
	holdUntil := fs.String("hold-until", "", "after sending, keep running until this file exists (the test's release)")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := crawler.Run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if *holdUntil != "" {
		if err := awaitFile(*holdUntil, o.Timeout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// awaitFile returns once path exists, or an error after timeout.
func awaitFile(path string, timeout time.Duration) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	expired := time.After(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-tick.C:
		case <-expired:
			return fmt.Errorf("fake crawler: not released (%s) within %s", path, timeout)
		}
	}
}
