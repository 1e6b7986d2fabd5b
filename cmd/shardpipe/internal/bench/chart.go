package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	chartLabelW = 330 // the mode labels' column
	chartBarW   = 520 // the bars' column: log10 of records/s from chartMinExp to chartMaxExp
	chartRowH   = 26
	chartTop    = 46
	chartMinExp = 1 // 10 records/s
)

// ceilingsOf are the modes whose median is the ceiling a mode is read
// against (the ratios of Ratios); the first of a pair is min(a, b).
var ceilingsOf = map[Mode][]string{Shardpipe: {"min(a, b)", "k"}, Totals: {"j"}, Replay: {"min(a, b)"},
	PGInbox: {"l"}, SQLEffect: {"l", "m"}, SQLBatches: {"l", "m"}}

// ChartPath returns where Output writes the chart beside the JSON report
// file: its name with .svg in place of .json (or .svg added).
func ChartPath(jsonFile string) string {
	return strings.TrimSuffix(jsonFile, ".json") + ".svg"
}

// WriteChart draws r's modes as an SVG bar chart on a log scale of
// records/s: each mode's median as a bar, its [min-max] as a line over it,
// ceilings (a, b, j, k, l, m) grey, and for d, e, f, m and n a mark at each ceiling
// they are read against with the ratio. Standard library only; it costs
// one pass over the modes.
func WriteChart(w io.Writer, r Report) error {
	med := map[string]float64{}
	for _, m := range r.Modes {
		med[m.Letter] = m.RecordsPerSec.Median
	}
	if a, b := med["a"], med["b"]; a > 0 && b > 0 {
		med["min(a, b)"] = min(a, b)
	} else {
		med["min(a, b)"] = max(a, b)
	}
	maxExp := chartMinExp + 1
	for _, m := range r.Modes {
		maxExp = max(maxExp, int(math.Ceil(math.Log10(max(m.RecordsPerSec.Max, m.RecordsPerSec.Median, 1)))))
	}
	x := func(v float64) float64 {
		if v < math.Pow10(chartMinExp) {
			return chartLabelW
		}
		return chartLabelW + (math.Log10(v)-chartMinExp)/float64(maxExp-chartMinExp)*chartBarW
	}
	width, height := chartLabelW+chartBarW+250, chartTop+chartRowH*len(r.Modes)+40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", esc(fmt.Sprintf(
		"shardpipe bench: records/s (median, [min-max]), %d records in %d partitions, %s, %d cores", r.Records, r.Partitions, r.Machine.Kafka, r.Machine.Cores)))
	for e := chartMinExp; e <= maxExp; e++ { // the scale: one line per power of ten
		gx := x(math.Pow10(e))
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", gx, chartTop-6, gx, height-34)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%s</text>`+"\n", gx, height-20, esc(humanRate(math.Pow10(e))))
	}
	for i, m := range r.Modes {
		y := chartTop + i*chartRowH
		fill := "#4a6fa5" // shardpipe
		switch m.Letter {
		case "a", "b", "j", "k", "l", "m":
			fill = "#9a9a9a" // a ceiling
		case "c":
			fill = "#c0504d" // naive
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", chartLabelW-8, y+14, esc("("+m.Letter+") "+m.Label))
		fmt.Fprintf(&b, `<rect class="bar" data-mode="%s" x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n",
			esc(m.Letter), chartLabelW, y+3, x(m.RecordsPerSec.Median)-chartLabelW, chartRowH-8, fill)
		if m.RecordsPerSec.Max > m.RecordsPerSec.Min {
			fmt.Fprintf(&b, `<line class="range" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n",
				x(m.RecordsPerSec.Min), y+chartRowH/2, x(m.RecordsPerSec.Max), y+chartRowH/2)
		}
		note, end := humanRate(m.RecordsPerSec.Median), x(max(m.RecordsPerSec.Max, m.RecordsPerSec.Median))
		for _, c := range ceilingsOf[m.Mode] {
			if cv := med[c]; cv > 0 {
				cx := x(cv)
				end = max(end, cx)
				fmt.Fprintf(&b, `<line class="ceiling" data-of="%s" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#b03a3a" stroke-width="2" stroke-dasharray="3,2"/>`+"\n",
					esc(c), cx, y, cx, y+chartRowH-2)
				note += fmt.Sprintf(", %.2f of %s", m.RecordsPerSec.Median/cv, c)
			}
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#333">%s</text>`+"\n", end+6, y+14, esc(note))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#666">grey: ceilings (no pipeline); dashed red: the ceiling a mode is read against</text>`+"\n", chartLabelW, height-4)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// humanRate writes v records/s shortly: 120k, 2.6M, 49.
func humanRate(v float64) string {
	switch {
	case v >= 1e6:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v/1e6), ".0") + "M"
	case v >= 1e3:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// esc escapes s for SVG text and attributes.
func esc(s string) string { return html.EscapeString(s) }
