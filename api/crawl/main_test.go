package crawl_test

import (
	"context"
	"fmt"
	"os"
	"testing"

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
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := crawler.Run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
