// Package docs_test holds the documentation to what it points at: every relative link and anchor
// of README.md and docs/*.md leads somewhere, and every Go comment that cites a doc section
// (a page of docs/ and a quoted heading) names a page and a heading that exist.
package docs_test

import (
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/mdlink"
	"github.com/taskloom/taskloom/internal/testenv"
)

func TestLinksResolve(t *testing.T) {
	root := testenv.RepoRoot()
	for _, page := range pages(t, root) {
		raw, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range mdlink.Links(string(raw)) {
			if err := resolve(root, page, string(raw), l.Target); err != nil {
				t.Errorf("%s:%d: link %s: %v", page, l.Line, l.Target, err)
			}
		}
	}
}

// resolve checks one link of page: a path relative to the page must exist, and an #anchor must
// be a heading of the page it points into. URLs with a scheme are not followed.
func resolve(root, page, text, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	if u.Scheme != "" || u.Host != "" {
		return nil
	}
	path, _ := url.PathUnescape(u.Path)
	if path != "" {
		full := filepath.Join(root, filepath.Dir(page), filepath.FromSlash(path))
		rel, err := filepath.Rel(root, full)
		if err != nil || strings.HasPrefix(rel, "..") {
			return fmt.Errorf("leaves the repository")
		}
		if _, err := os.Stat(full); err != nil {
			return fmt.Errorf("no such file %s", rel)
		}
		if u.Fragment == "" {
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return fmt.Errorf("an anchor into a file that is not Markdown")
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		text = string(b)
	}
	for _, h := range mdlink.Headings(text) {
		if h.Anchor == u.Fragment {
			return nil
		}
	}
	return fmt.Errorf("no heading with anchor #%s", u.Fragment)
}

// staleCitation is the citation form used before the docs were split: a quoted README section.
var staleCitation = regexp.MustCompile(`README(?:\.md)?[,:]? "`)

func TestCodeCitationsResolve(t *testing.T) {
	root := testenv.RepoRoot()
	cache := map[string]string{}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for _, c := range comments(t, path) {
			text := strings.Join(strings.Fields(c.text), " ") // a citation may wrap across comment lines
			text = strings.ReplaceAll(text, " //", "")
			if staleCitation.MatchString(text) {
				t.Errorf("%s:%d: cites a README section; cite docs/x.md \"Heading\" or say why in the comment", rel, c.line)
			}
			for _, m := range mdlink.CitationRE.FindAllStringSubmatch(text, -1) {
				checked++
				page := "docs/" + m[1]
				body, ok := cache[page]
				if !ok {
					b, err := os.ReadFile(filepath.Join(root, page))
					if err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
					body, cache[page] = string(b), string(b)
				}
				if body == "" {
					t.Errorf("%s:%d: cites %s, which does not exist", rel, c.line, page)
					continue
				}
				if m[2] != "" && !mdlink.Resolves(body, m[2]) {
					t.Errorf("%s:%d: cites %s %q, which has no such heading", rel, c.line, page, m[2])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no citation found: the scan is broken")
	}
}

type comment struct {
	text string
	line int
}

// comments returns a Go file's comments, consecutive line comments joined into one.
func comments(t *testing.T, path string) []comment {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var s scanner.Scanner
	s.Init(fset.AddFile(path, -1, len(src)), src, nil, scanner.ScanComments)
	var (
		out      []comment
		lastLine = -2
	)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok != token.COMMENT {
			continue
		}
		line := fset.Position(pos).Line
		body := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(lit, "*/"), "//"), "/*")
		if line == lastLine+1 && len(out) > 0 && strings.HasPrefix(lit, "//") {
			out[len(out)-1].text += " " + body
		} else {
			out = append(out, comment{text: body, line: line})
		}
		lastLine = line
	}
}

// pages are the Markdown files the link test reads: README.md and every page of docs/.
func pages(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, filepath.Join("docs", filepath.Base(d)))
	}
	return out
}
