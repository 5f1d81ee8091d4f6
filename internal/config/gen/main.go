// Command gen writes docs/configuration.md from the typed configuration in internal/config (see
// config.Reference), or prints it without -w. `go generate ./internal/config` runs it.
//
//	go run ./internal/config/gen -w docs/configuration.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/taskloom/taskloom/internal/config"
)

func main() {
	src := flag.String("src", "internal/config", "the config package's directory")
	file := flag.String("w", "", "write the page to this file")
	flag.Parse()
	page, err := config.Reference(*src)
	if err == nil && *file != "" {
		err = os.WriteFile(*file, []byte(page), 0o644)
	} else if err == nil {
		fmt.Print(page)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
