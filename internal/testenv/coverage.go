package testenv

import (
	"fmt"
	"os"

	"github.com/taskloom/taskloom/internal/mongox"
)

// checkIndexCoverage reports, after a package's tests, the query shapes its stores issued that
// no index they declared serves (mongox.UncoveredShapes). It judges only collections whose
// indexes were declared in this test binary, so it does not depend on which other packages ran.
// INDEX_COVERAGE=report prints the shapes without failing; INDEX_COVERAGE=list also lists every
// shape recorded.
func checkIndexCoverage() bool {
	if os.Getenv("INDEX_COVERAGE") == "list" {
		for _, s := range mongox.RecordedShapes() {
			fmt.Fprintln(os.Stderr, "index coverage: recorded "+s.String())
		}
	}
	uncovered := mongox.UncoveredShapes()
	if len(uncovered) == 0 {
		return true
	}
	fmt.Fprintln(os.Stderr, "index coverage: query shapes no declared index serves (equality, then sort, then range):")
	for _, s := range uncovered {
		fmt.Fprintln(os.Stderr, "  "+s)
	}
	mode := os.Getenv("INDEX_COVERAGE")
	return mode == "report" || mode == "list"
}
