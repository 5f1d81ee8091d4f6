// Package explain writes the Temporal user metadata every taskloom execution carries
// (docs/operations.md "What each execution shows"): the one-line static summary, the markdown static details, and the
// current details line. The workflows and their client.go files call it; it does no I/O.
package explain

import (
	"strings"
	"unicode/utf8"
)

// MaxSummary is the longest static summary Temporal shows on one line (bytes).
const MaxSummary = 200

// Summary joins parts with " · ", skipping empty ones, and cuts the line to MaxSummary bytes on
// a character boundary.
func Summary(parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	s := strings.Join(kept, " · ")
	if len(s) <= MaxSummary {
		return s
	}
	cut := MaxSummary - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Link is a place where an operator reads or acts on the unit: a console page or an API path,
// both on the taskloom API (API_PUBLIC_URL).
type Link struct {
	Name string
	Path string
}

// Details is the static details' markdown: what the execution is, then where to look at it.
func Details(what string, links ...Link) string {
	var b strings.Builder
	b.WriteString(what)
	if len(links) > 0 {
		b.WriteString("\n\nOn the taskloom API (API_PUBLIC_URL):\n\n")
		for _, l := range links {
			b.WriteString("- " + l.Name + ": `" + l.Path + "`\n")
		}
	}
	return b.String()
}
