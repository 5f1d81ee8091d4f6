package readme_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/taskloom/taskloom/internal/testenv"
)

// block is one fenced code block of a doc page.
type block struct {
	Lang  string   // first word of the info string ("sh", "text", "json", …)
	Line  int      // 1-based line of the opening fence
	Lines []string // the content, the fence's indentation removed
}

var fence = regexp.MustCompile("^( *)(```+)(.*)$")

// parseBlocks returns a page's fenced code blocks in order. A fence may be indented (inside a
// list item); its content loses that indentation, and the block ends at a fence of at least as
// many backticks.
func parseBlocks(name, readme string) ([]block, error) {
	var (
		out    []block
		cur    *block
		indent int
		ticks  string
	)
	for i, line := range strings.Split(readme, "\n") {
		m := fence.FindStringSubmatch(line)
		if cur == nil {
			// CommonMark: the info string of a backtick fence holds no backtick (so a line
			// starting with inline code is no fence)
			if m != nil && !strings.Contains(m[3], "`") {
				lang, _, _ := strings.Cut(strings.TrimSpace(m[3]), " ")
				cur, indent, ticks = &block{Lang: lang, Line: i + 1}, len(m[1]), m[2]
			}
			continue
		}
		if m != nil && strings.TrimSpace(m[3]) == "" && len(m[2]) >= len(ticks) {
			out = append(out, *cur)
			cur = nil
			continue
		}
		cur.Lines = append(cur.Lines, strings.TrimPrefix(line, strings.Repeat(" ", indent)))
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: code block never closed", name, cur.Line)
	}
	return out, nil
}

// script turns a page into one bash script whose line N is the page's line N: the content of every
// ```sh block stays where it is, each opening fence becomes `__block N` (which prints where the
// block starts), everything else becomes an empty line. So $LINENO in bash is the page's line,
// and variables set by one block are there for the next, as in the reader's shell.
func script(readme string, blocks []block) string {
	lines := make([]string, strings.Count(readme, "\n")+1)
	for _, b := range blocks {
		if b.Lang != "sh" {
			continue
		}
		lines[b.Line-1] = fmt.Sprintf("__block %d", b.Line)
		for i, l := range b.Lines {
			lines[b.Line+i] = l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// ruleViolations lists ```sh lines of a page that break the docs' conventions for commands: the
// production CLI is ./.bin/starter (built by make), the Temporal CLI is ./.bin/temporal, and
// placeholders like <id> are variables the page defines.
func ruleViolations(name string, blocks []block) []string {
	checks := []struct {
		re  *regexp.Regexp
		why string
	}{
		{regexp.MustCompile(`(^|[;&|(]\s*)go run \./starter(\s|$)`), "use ./.bin/starter (make builds it), not go run ./starter"},
		{regexp.MustCompile(`(^|[;&|(]\s*)(starter|temporal) `), "use ./.bin/starter or ./.bin/temporal: neither is on the PATH"},
		{regexp.MustCompile(`<[a-zA-Z][a-zA-Z _-]*>`), "a <placeholder> does not run: use a variable the page defines"},
	}
	var out []string
	for _, b := range blocks {
		if b.Lang != "sh" {
			continue
		}
		for i, l := range b.Lines {
			code, _, _ := strings.Cut(l, " #")
			for _, c := range checks {
				if c.re.MatchString(strings.TrimSpace(code)) {
					out = append(out, fmt.Sprintf("%s:%d: %s: %s", name, b.Line+1+i, c.why, strings.TrimSpace(l)))
				}
			}
		}
	}
	return out
}

func TestParseBlocksKeepsLinesAndIndentation(t *testing.T) {
	readme := "# t\n\n```sh\nA=1\n```\n\n- item\n\n  ```sh\n  echo $A \\\n    more\n  ```\n```text\nmake dev\n```\n```` ```sh ```` is inline\n"
	blocks, err := parseBlocks("README.md", readme)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 3 || blocks[0].Line != 3 || blocks[1].Line != 9 || blocks[2].Lang != "text" {
		t.Fatalf("blocks: %+v", blocks)
	}
	if got := blocks[1].Lines; len(got) != 2 || got[0] != "echo $A \\" || got[1] != "  more" {
		t.Fatalf("indented block lines: %q", got)
	}
	s := strings.Split(script(readme, blocks), "\n")
	if s[2] != "__block 3" || s[3] != "A=1" || s[9] != "echo $A \\" || s[14] != "" {
		t.Fatalf("script lines do not match README lines: %q", s)
	}
}

func TestRuleViolations(t *testing.T) {
	blocks := []block{{Lang: "sh", Line: 1, Lines: []string{
		"go run ./starter apikey list", "temporal workflow list", "./.bin/temporal workflow list",
		"curl $API/x/<id>", "./.bin/starter apikey list   # not go run ./starter", "X=$(starter x)",
	}}, {Lang: "text", Line: 20, Lines: []string{"go run ./starter x"}}}
	got := ruleViolations("README.md", blocks)
	want := []string{"README.md:2:", "README.md:3:", "README.md:5:", "README.md:7:"}
	if len(got) != len(want) {
		t.Fatalf("violations: %q", got)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Fatalf("violation %d = %q, want prefix %q", i, got[i], w)
		}
	}
}

var (
	varUse    = regexp.MustCompile(`\$\{?([A-Z_][A-Z0-9_]*)`)
	varAssign = regexp.MustCompile(`(?:^|[\s;(&|])(?:for\s+)?([A-Z_][A-Z0-9_]*)(?:=|\s+in\s)`)
)

// unsetVariables lists the upper-case variables a page's ```sh blocks use before the page itself
// sets them: each page runs in a fresh shell, so it may not lean on another page's variables.
func unsetVariables(name string, blocks []block) []string {
	set := map[string]bool{}
	var out []string
	for _, b := range blocks {
		if b.Lang != "sh" {
			continue
		}
		for i, l := range b.Lines {
			code, _, _ := strings.Cut(l, " #")
			for _, m := range varAssign.FindAllStringSubmatch(code, -1) {
				set[m[1]] = true // a line's own assignment counts: VAR=$(…) and for VAR in … use it after
			}
			for _, m := range varUse.FindAllStringSubmatch(code, -1) {
				if !set[m[1]] {
					out = append(out, fmt.Sprintf("%s:%d: $%s is used before the page sets it", name, b.Line+1+i, m[1]))
					set[m[1]] = true // one report per variable
				}
			}
		}
	}
	return out
}

// Without the dev stack: every page parses, keeps the command conventions and sets what it uses.
func TestDocsPagesStandAlone(t *testing.T) {
	pages := readPages(t, testenv.RepoRoot())
	var problems []string
	for _, p := range pages {
		problems = append(problems, ruleViolations(p.name, p.blocks)...)
		problems = append(problems, unsetVariables(p.name, p.blocks)...)
	}
	if len(problems) > 0 {
		t.Fatalf("doc pages that cannot run as written:\n%s", strings.Join(problems, "\n"))
	}
}

func TestUnsetVariables(t *testing.T) {
	blocks := []block{{Lang: "sh", Line: 1, Lines: []string{
		"API=http://x", "curl $API/a -H \"X: $KEY\"", "for ID in 1 2; do echo $ID; done", "echo ${OTHER}",
	}}}
	got := unsetVariables("p.md", blocks)
	if want := []string{"p.md:3: $KEY is used before the page sets it", "p.md:5: $OTHER is used before the page sets it"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
