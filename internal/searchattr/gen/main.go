// Command gen prints the search-attribute table of docs/operations.md from internal/searchattr, or with -w FILE
// writes it between FILE's `<!-- searchattr -->` and `<!-- /searchattr -->` lines.
//
//	go run ./internal/searchattr/gen -w docs/operations.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/taskloom/taskloom/internal/searchattr"
)

func main() {
	file := flag.String("w", "", "rewrite the table in this Markdown file")
	flag.Parse()
	table := searchattr.Markdown(searchattr.Docs)
	if *file == "" {
		fmt.Print(table)
		return
	}
	if err := rewrite(*file, table); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func rewrite(file, table string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := searchattr.ReplaceTable(string(raw), table)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, []byte(out), 0o644)
}
