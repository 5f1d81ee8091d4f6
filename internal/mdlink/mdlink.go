// Package mdlink reads Markdown the way GitHub renders it, as far as the docs' links need: the
// anchors its headings get and the relative links a page holds. The docs tests use it to fail on
// a link or a citation that points nowhere, and the configuration page to link its citations.
package mdlink

import (
	"fmt"
	"iter"
	"regexp"
	"strings"
	"unicode"
)

// Slug is the anchor GitHub gives a heading: lower case, every character that is not a letter,
// a digit, a space, a hyphen or an underscore dropped, spaces turned into hyphens.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)

// Heading is one ATX heading of a page.
type Heading struct {
	Level  int
	Text   string // as written, inline Markdown included
	Anchor string // unique on the page: a repeated slug gets -1, -2, … as on GitHub
	Line   int
}

// Headings lists a page's headings outside fenced code blocks, in order.
func Headings(page string) []Heading {
	var out []Heading
	seen := map[string]int{}
	for i, line := range proseLines(page) {
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(plain(m[2]))
		anchor := slug
		if n := seen[slug]; n > 0 {
			anchor = fmt.Sprintf("%s-%d", slug, n)
		}
		seen[slug]++
		out = append(out, Heading{Level: len(m[1]), Text: m[2], Anchor: anchor, Line: i + 1})
	}
	return out
}

// proseLines yields a page's lines outside fenced code blocks with their index. A fence closes
// on a line of at least its opening run and nothing else (an info string opens, never closes).
func proseLines(page string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		fenced := ""
		for i, line := range strings.Split(page, "\n") {
			if f := fence(line); f != "" {
				switch {
				case fenced == "":
					fenced = f
				case strings.HasPrefix(f, fenced) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "`~")) == "":
					fenced = ""
				}
				continue
			}
			if fenced != "" {
				continue
			}
			if !yield(i, line) {
				return
			}
		}
	}
}

// fence returns the run of backticks or tildes that opens or closes a fenced block, or "".
func fence(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, c) {
			n := len(t) - len(strings.TrimLeft(t, c[:1]))
			if c[0] == '`' && strings.Contains(t[n:], "`") {
				return "" // inline code at the start of a line, not a fence
			}
			return t[:n]
		}
	}
	return ""
}

var inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// plain is a heading's text as GitHub slugs it: links become their text; the rest of the inline
// markup is punctuation Slug drops.
func plain(s string) string { return inlineLink.ReplaceAllString(s, "$1") }

// Link is one inline link of a page.
type Link struct {
	Target string // as written: a path, path#anchor, #anchor or a URL
	Line   int
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// Links lists the inline links of a page outside fenced code blocks and code spans.
func Links(page string) []Link {
	var out []Link
	for i, line := range proseLines(page) {
		for _, m := range linkRE.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			out = append(out, Link{Target: m[1], Line: i + 1})
		}
	}
	return out
}

var codeSpan = regexp.MustCompile("(`+)[^`].*?(`+)")

func stripCodeSpans(line string) string { return codeSpan.ReplaceAllString(line, "") }

// CitationRE matches a citation of the docs from source code: a page of docs/, then optionally
// the cited heading in double quotes. Submatch 1 is the page's file name, 2 the heading.
var CitationRE = regexp.MustCompile(`\bdocs/([a-z0-9-]+\.md)(?: "([^"\n]+)")?`)

// Resolves reports whether a page's text has the cited heading (compared by anchor, so case and
// punctuation do not matter).
func Resolves(page, heading string) bool {
	want := Slug(plain(heading))
	for _, h := range Headings(page) {
		if Slug(plain(h.Text)) == want {
			return true
		}
	}
	return false
}
