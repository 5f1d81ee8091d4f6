// Command starter is taskloom's production CLI: it runs the worker and the API, manages API keys
// and schedules, and starts work in each subsystem. It links none of the dev stand-ins (embedded
// database, miniredis, kfake, the Bitable emulator, the in-repo fakes); those live in ./starter/dev,
// which `make dev` runs.
package main

import (
	"os"

	"github.com/taskloom/taskloom/starter/cli"
)

func main() { os.Exit(cli.Main(cli.Root())) }
