package main

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/shardpipe/shardpipe/cmd/shardpipe/internal/flagcheck"
)

const (
	rangesBegin = "<!-- ranges: checked against every command by cmd/shardpipe/ranges_test.go -->"
	rangesEnd   = "<!-- end of ranges -->"
)

// rangeRow is a row of docs/configuration.md's table of ranges: the intervals of
// values taken, and the flags (each with the command it is of, when only
// one's) and Redis URL options that take them.
type rangeRow struct {
	text      string
	intervals [][2]string // from, to; as written
	flags     []string    // "--name" or "--name (command)"
	options   []string    // Redis URL query options
}

// readRanges parses docs/configuration.md's table of ranges.
func readRanges(t *testing.T) []rangeRow {
	t.Helper()
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	rangeCell := regexp.MustCompile("`([^`]+)`( \\(([a-z-]+)\\))?") // a setting, and the command it is of
	rangeSplit := regexp.MustCompile(` or |, `)                     // between intervals
	i, j := strings.Index(readme, rangesBegin), strings.Index(readme, rangesEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/configuration.md lacks the markers %q ... %q", rangesBegin, rangesEnd)
	}
	var rows []rangeRow
	for _, line := range strings.Split(readme[i+len(rangesBegin):j], "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 2 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.TrimSpace(cells[0]) == "range" {
			continue
		}
		r := rangeRow{text: strings.TrimSpace(cells[0])}
		values, _, _ := strings.Cut(r.text, " (")
		for _, iv := range rangeSplit.Split(values, -1) {
			from, to, ok := strings.Cut(iv, " to ")
			if !ok {
				to = from
			}
			r.intervals = append(r.intervals, [2]string{from, to})
		}
		for _, m := range rangeCell.FindAllStringSubmatch(cells[1], -1) {
			switch name := m[1]; {
			case strings.HasPrefix(name, "--"):
				r.flags = append(r.flags, name+m[2])
			case strings.HasPrefix(name, "?"):
				r.options = append(r.options, name[1:])
			default:
				t.Fatalf("docs/configuration.md ranges: %q is neither a flag nor a ?option", name)
			}
		}
		rows = append(rows, r)
	}
	if len(rows) < 5 {
		t.Fatalf("docs/configuration.md ranges: %d rows; the table was not parsed", len(rows))
	}
	return rows
}

// numericFlag reports whether f takes a number or a duration.
func numericFlag(f cli.Flag) bool {
	switch f.(type) {
	case *cli.IntFlag, *cli.Uint64Flag, *cli.FloatFlag, *cli.DurationFlag:
		return true
	}
	return false
}

// outside returns values just outside [from, to] for flag f's kind, and
// NaN for a float.
func outside(t *testing.T, f cli.Flag, from, to string) []string {
	t.Helper()
	switch f.(type) {
	case *cli.DurationFlag:
		lo, err1 := time.ParseDuration(from)
		hi, err2 := time.ParseDuration(to)
		if err1 != nil || err2 != nil {
			t.Fatalf("docs/configuration.md ranges: %q to %q are not durations", from, to)
		}
		return []string{(lo - time.Millisecond).String(), (hi + time.Millisecond).String()}
	case *cli.FloatFlag:
		lo, err1 := strconv.ParseFloat(from, 64)
		hi, err2 := strconv.ParseFloat(to, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("docs/configuration.md ranges: %q to %q are not numbers", from, to)
		}
		return []string{fmt.Sprint(lo - 0.001), fmt.Sprint(hi + 0.001), "NaN", "Inf"}
	}
	lo, err1 := strconv.ParseInt(from, 10, 64)
	if hi, err := strconv.ParseInt(to, 10, 64); err == nil && err1 == nil {
		return []string{strconv.FormatInt(lo-1, 10), strconv.FormatInt(hi+1, 10)}
	}
	hi, err2 := strconv.ParseUint(to, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("docs/configuration.md ranges: %q to %q are not whole numbers", from, to)
	}
	out := []string{strconv.FormatInt(lo-1, 10)}
	if hi < math.MaxUint64 {
		out = append(out, strconv.FormatUint(hi+1, 10))
	}
	return out
}

// TestREADMERangesAreChecked: every numeric flag of every command, and
// every numeric Redis URL option, has a row in docs/configuration.md's table of
// ranges; each end of each range is taken, and each value just outside
// (NaN and Inf for a fraction) is a problem line naming the flag or the
// option, before anything connects.
func TestREADMERangesAreChecked(t *testing.T) {
	rows := readRanges(t)
	documented := map[string]rangeRow{}
	for _, r := range rows {
		for _, f := range r.flags {
			documented[f] = r
		}
	}
	for _, cmd := range newApp(nil, nil).Commands {
		for _, f := range cmd.Flags {
			name := "--" + f.Names()[0]
			if !numericFlag(f) {
				continue
			}
			r, ok := documented[name+" ("+cmd.Name+")"]
			if !ok {
				r, ok = documented[name]
			}
			if !ok {
				t.Errorf("%s %s: no row in docs/configuration.md's ranges", cmd.Name, name)
				continue
			}
			t.Run(cmd.Name+" "+name, func(t *testing.T) { checkFlagRange(t, cmd.Name, f, r) })
		}
	}
	for _, r := range rows {
		for _, o := range r.options {
			t.Run("?"+o, func(t *testing.T) { checkOptionRange(t, o, r) })
		}
	}
}

// checkFlagRange runs command with f at the ends of r's ranges and just
// outside them; an unknown flag stops the command at its usage check.
func checkFlagRange(t *testing.T, command string, f cli.Flag, r rangeRow) {
	name := f.Names()[0]
	beside := map[string][]string{"http-timeout": {"--effect", "http", "--http-url", "http://h/"}, // checked only with these
		"sql-inbox-keep": {"--effect", "sql", "--sql-url", "postgres://u@h/db", "--sql-exec", "INSERT INTO t VALUES (@id)"}}
	names := func(v string) bool {
		args := append([]string{command, "--zz-stop", "--" + name + "=" + v}, beside[name]...)
		code, _, stderr := call(t, nil, args...)
		if code != exitUsage {
			t.Fatalf("%q: exit %d, want %d (the unknown flag stops it)", args, code, exitUsage)
		}
		return slices.ContainsFunc(problemLines(stderr), func(l string) bool {
			return strings.Contains(l, "--"+name+" (") || strings.Contains(l, "flag -"+name) || strings.Contains(l, "for flag "+name+":")
		})
	}
	var inside []string
	for _, iv := range r.intervals {
		inside = append(inside, iv[0], iv[1])
	}
	for _, iv := range r.intervals {
		for _, v := range []string{iv[0], iv[1]} {
			if names(v) {
				t.Errorf("%s --%s=%s: refused; docs/configuration.md says %s", command, name, v, r.text)
			}
		}
		for _, v := range outside(t, f, iv[0], iv[1]) {
			if !slices.Contains(inside, v) && !names(v) {
				t.Errorf("%s --%s=%s: taken; docs/configuration.md says %s", command, name, v, r.text)
			}
		}
	}
}

// checkOptionRange parses Redis URLs with option o at the ends of r's
// ranges and just outside them, for each client that takes o.
func checkOptionRange(t *testing.T, o string, r rangeRow) {
	urls := []struct {
		base    string
		cluster bool
	}{{"redis://h:1/0?client_name=t", false}, {"redis://h:1?client_name=t", true}, {"redis://h:1?master_name=m", false}}
	taken := func(v string) (ok bool, errs []string) {
		for _, u := range urls {
			_, err := flagcheck.ParseRedis(u.base+"&"+o+"="+v, u.cluster)
			if err == nil {
				return true, nil
			}
			if strings.Contains(err.Error(), "unexpected option: "+o) {
				continue // not this client's option
			}
			if !strings.Contains(err.Error(), "option "+o+":") || strings.Contains(err.Error(), "="+v) {
				t.Errorf("?%s=%s: %v; want a line naming the option, not the value", o, v, err)
			}
			errs = append(errs, err.Error())
		}
		return false, errs
	}
	for _, iv := range r.intervals {
		for _, v := range []string{iv[0], iv[1]} {
			if ok, errs := taken(v); !ok {
				t.Errorf("?%s=%s: refused (%q); docs/configuration.md says %s", o, v, errs, r.text)
			}
		}
		var out []string
		if d, err := time.ParseDuration(iv[0]); err == nil {
			hi, _ := time.ParseDuration(iv[1])
			out = []string{(d - time.Millisecond).String(), (hi + time.Millisecond).String()}
		} else {
			lo, _ := strconv.ParseInt(iv[0], 10, 64)
			hi, _ := strconv.ParseInt(iv[1], 10, 64)
			out = []string{strconv.FormatInt(lo-1, 10), strconv.FormatInt(hi+1, 10)}
		}
		for _, v := range out {
			if ok, _ := taken(v); ok {
				t.Errorf("?%s=%s: taken; docs/configuration.md says %s", o, v, r.text)
			}
		}
	}
}
