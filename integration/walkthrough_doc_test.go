package integration_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// docCommand is one shell command of a page's walkthrough: the text as it
// runs (continuation lines joined, the trailing comment cut), its comment,
// and whether the page runs it in the background (a trailing &).
type docCommand struct {
	line, comment string
	background    bool
}

// walkthroughCommands returns, in order, the commands of the ```sh blocks
// under the heading of page (up to the next heading of that level).
func walkthroughCommands(page, heading string) ([]docCommand, error) {
	text, err := os.ReadFile(page)
	if err != nil {
		return nil, fmt.Errorf("walkthrough: %w", err)
	}
	s := string(text)
	level := heading[:strings.IndexByte(heading, ' ')+1]
	start := strings.Index(s, "\n"+heading+"\n")
	if start < 0 {
		return nil, fmt.Errorf("walkthrough: %s has no heading %q", page, heading)
	}
	s = s[start+len(heading)+2:]
	if end := strings.Index(s, "\n"+level); end >= 0 {
		s = s[:end]
	}
	var cmds []docCommand
	for _, b := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```").FindAllStringSubmatch(s, -1) {
		joined := strings.ReplaceAll(b[1], "\\\n", " ")
		for _, l := range strings.Split(joined, "\n") {
			c := docCommand{line: l}
			if i := strings.Index(l, " # "); i >= 0 {
				c.line, c.comment = l[:i], strings.TrimSpace(l[i+3:])
			}
			c.line = strings.Join(strings.Fields(c.line), " ")
			if c.line == "" {
				continue
			}
			if strings.HasSuffix(c.line, " &") {
				c.line, c.background = strings.TrimSuffix(c.line, " &"), true
			}
			cmds = append(cmds, c)
		}
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("walkthrough: no ```sh block under %q in %s", heading, page)
	}
	return cmds, nil
}

// flagValue returns the value of --name in a command line, "" when absent.
func flagValue(line, name string) string {
	f := strings.Fields(line)
	for i, w := range f {
		if w == "--"+name && i+1 < len(f) {
			return f[i+1]
		}
		if v, ok := strings.CutPrefix(w, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}
