package mdlink

import (
	"reflect"
	"testing"
)

func TestSlugFollowsGitHub(t *testing.T) {
	for in, want := range map[string]string{
		"The dev stack (`make dev`)":             "the-dev-stack-make-dev",
		"Echo / TaskEcho":                        "echo--taskecho",
		"Settings and TaskEcho's seed items":     "settings-and-taskechos-seed-items",
		"Operator runbook (suspended tasks)":     "operator-runbook-suspended-tasks",
		"Quick start: push, read, pull":          "quick-start-push-read-pull",
		"Writes: guarded, one command per batch": "writes-guarded-one-command-per-batch",
		"Feishu's limits":                        "feishus-limits",
		"snake_case 2 ways":                      "snake_case-2-ways",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHeadingsSkipCodeAndNumberRepeats(t *testing.T) {
	page := "# Title\n\n## Tests\n\n```sh\n# a shell comment\n```\n\n## Tests\n\n## [Linked](x.md) heading\n"
	var got []string
	for _, h := range Headings(page) {
		got = append(got, h.Anchor)
	}
	if want := []string{"title", "tests", "tests-1", "linked-heading"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("anchors %q, want %q", got, want)
	}
	if !Resolves(page, "linked heading") || Resolves(page, "a shell comment") {
		t.Fatal("Resolves must match headings by anchor and ignore code blocks")
	}
}

func TestLinksSkipCode(t *testing.T) {
	// A fence line with an info string inside a block (a Markdown sample) does not close it.
	page := "See [a](a.md#x) and `[b](b.md)`.\n\n```text\n[c](c.md)\n```sh\n[e](e.md)\n```\n[d](https://example.com \"title\")\n"
	var got []string
	for _, l := range Links(page) {
		got = append(got, l.Target)
	}
	if want := []string{"a.md#x", "https://example.com"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("links %q, want %q", got, want)
	}
}

func TestCitationRE(t *testing.T) {
	m := CitationRE.FindAllStringSubmatch(`see docs/pipelines.md "Fair under load" and docs/api.md.`, -1)
	if len(m) != 2 || m[0][1] != "pipelines.md" || m[0][2] != "Fair under load" || m[1][1] != "api.md" || m[1][2] != "" {
		t.Fatalf("matches %q", m)
	}
}
