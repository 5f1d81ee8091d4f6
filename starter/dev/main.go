// Command dev is taskloom's development stack; `make dev` runs it. With no arguments it starts the
// Temporal dev server, embedded stand-ins for every dependency whose URL is unset, the in-repo
// fakes, the worker and the API in one process. Every starter subcommand works here too, plus
// `pipeline fakes` and `crawl fake-crawler` (the dev stack's crawler command runs
// `{self} crawl fake-crawler`, {self} being this binary). The stand-ins are linked only into this
// binary; the production binary (./starter) has none of them (see tests/arch).
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/taskloom/taskloom/starter/cli"
)

func main() { os.Exit(cli.Main(devRoot())) }

// devRoot is the starter command tree whose own action runs the dev stack.
func devRoot() *cobra.Command {
	root := cli.Root()
	root.Use = "dev"
	root.Short = "Run everything locally: Temporal dev server, embedded dependencies, worker and API"
	root.Long = `dev starts the Temporal dev server (./temporal-dev.sh) unless TEMPORAL_ADDRESS is set,
embedded FerretDB/miniredis/kfake for every dependency whose URL is unset, the in-repo fakes,
the worker and the API; it seeds demo data and prints the URLs and an admin API key.
State (the Temporal dev server's database, FerretDB's files) is kept in DEV_DATA_DIR (.data)
across restarts; --reset deletes it first. Ctrl-C stops every process it started and exits 0. Its subcommands are starter's, plus "pipeline fakes" and
"crawl fake-crawler".`
	root.Args = cobra.NoArgs
	var reset bool
	root.Flags().BoolVar(&reset, "reset", false, "delete the kept state (Temporal dev server database, FerretDB files) first: start clean")
	root.RunE = func(cmd *cobra.Command, _ []string) error { return runDev(cmd.Context(), reset) }
	if p, _, err := root.Find([]string{"pipeline"}); err == nil && p != root {
		p.AddCommand(pipelineFakesCmd())
	}
	if c, _, err := root.Find([]string{"crawl"}); err == nil && c != root {
		c.AddCommand(crawlFakeCrawlerCmd())
	}
	return root
}
