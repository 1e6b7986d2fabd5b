package apicheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

var (
	mdLinkRe    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	mdHeadingRe = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	mdCodeRe    = regexp.MustCompile("`[^`]*`")
	mdInlineRe  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// docFiles are the Markdown pages whose links are checked, relative to
// the repository's root: README.md, CONTRIBUTING.md, BENCHMARKS.md and
// every docs/*.md.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ has no .md page")
	}
	files := []string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md"}
	for _, p := range pages {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// githubAnchor is the anchor GitHub gives a heading: its text without
// Markdown (links keep their text, code spans their content), lowercased,
// every character that is not a letter, digit, space, '-' or '_' dropped,
// and each space made a '-'.
func githubAnchor(heading string) string {
	heading = mdInlineRe.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdPage is what the link check needs of one Markdown page: its anchors
// and its links with their line numbers, both outside fenced code blocks.
type mdPage struct {
	anchors map[string]bool
	links   []mdLink
}

// mdLink is one link target of a page and the line it is on.
type mdLink struct {
	line   int
	target string
}

// parsePage reads the headings (with GitHub's -1, -2 suffixes for
// repeats) and the links of a Markdown text. Code spans and fenced blocks
// hold no links.
func parsePage(text string) mdPage {
	p := mdPage{anchors: map[string]bool{}}
	seen := map[string]int{}
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := mdHeadingRe.FindStringSubmatch(line); m != nil {
			a := githubAnchor(m[1])
			if n := seen[a]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				p.anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range mdLinkRe.FindAllStringSubmatch(mdCodeRe.ReplaceAllString(line, ""), -1) {
			p.links = append(p.links, mdLink{line: i + 1, target: m[1]})
		}
	}
	return p
}

// TestGitHubAnchor: headings as the docs write them get GitHub's anchors.
func TestGitHubAnchor(t *testing.T) {
	for _, tt := range []struct{ heading, want string }{
		{"Guarantees", "guarantees"},
		{"External effects: `--effect http`", "external-effects---effect-http"},
		{"Probes: `/healthz` and `/readyz`", "probes-healthz-and-readyz"},
		{"Moving a group's offsets", "moving-a-groups-offsets"},
		{"Operating (`--metrics-addr`, `--instance-id`, `OTEL_*`)", "operating---metrics-addr---instance-id-otel_"},
		{"Record mode (`--effect none|totals`: the ledger write is the effect)", "record-mode---effect-nonetotals-the-ledger-write-is-the-effect"},
		{"See [the README](../README.md)", "see-the-readme"},
		{"Ten minutes on local servers", "ten-minutes-on-local-servers"},
	} {
		if got := githubAnchor(tt.heading); got != tt.want {
			t.Errorf("githubAnchor(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

// TestParsePage: repeated headings get numbered anchors, and neither code
// spans nor fenced blocks give links or headings.
func TestParsePage(t *testing.T) {
	p := parsePage("# A\n## A\nsee [b](b.md#x) and `[c](c.md)`\n```sh\n# not a heading [d](d.md)\n```\n")
	for _, a := range []string{"a", "a-1"} {
		if !p.anchors[a] {
			t.Errorf("anchor %q missing: %v", a, p.anchors)
		}
	}
	if p.anchors["not-a-heading"] {
		t.Error("a comment in a fenced block was taken for a heading")
	}
	if want := []mdLink{{line: 3, target: "b.md#x"}}; !slices.Equal(p.links, want) {
		t.Errorf("links = %v, want %v", p.links, want)
	}
}

// TestDocLinksResolve: every relative link of README.md, CONTRIBUTING.md
// and docs/*.md names a file or directory that exists, and every #anchor
// (of the same page, or of another Markdown page) names one of that page's
// headings by GitHub's rules. A section moved or renamed without its links
// fails here.
func TestDocLinksResolve(t *testing.T) {
	const root = "../../.."
	pages := map[string]mdPage{}
	read := func(rel string) (mdPage, error) {
		if p, ok := pages[rel]; ok {
			return p, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return mdPage{}, err
		}
		pages[rel] = parsePage(string(b))
		return pages[rel], nil
	}
	checked := 0
	for _, file := range docFiles(t, root) {
		page, err := read(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range page.links {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(l.target, "#")
			target := file
			if path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
				if strings.HasPrefix(target, "../") || filepath.IsAbs(path) {
					t.Errorf("%s:%d: link %q leaves the repository", file, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", file, l.line, l.target, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into %s, which is not a Markdown page", file, l.line, l.target, target)
				continue
			}
			tp, err := read(target)
			if err != nil {
				t.Errorf("%s:%d: link %q: %v", file, l.line, l.target, err)
				continue
			}
			if !tp.anchors[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", file, l.line, l.target, target, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the pages were not parsed")
	}
	t.Logf("%d relative links resolve", checked)
}
